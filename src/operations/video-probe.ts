import { runOnEngine } from "./engine-runner";
import type { WorkerOperation } from "./types";

export const videoProbe: WorkerOperation<"video.probe"> = {
  operationId: "probeVideo",
  summary: "Probe a video",
  description:
    "Codec, duration, frame rate (reduced fraction), alpha (pixel format or VP9 alpha_mode) and dimensions of the first video stream. An input without a video stream → 415.",
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "video.probe", sourceUrl, p),
};
