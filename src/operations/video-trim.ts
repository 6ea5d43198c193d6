import { runOnEngine } from "./engine-runner";
import type { WorkerOperation } from "./types";

export const videoTrim: WorkerOperation<"video.trim"> = {
  operationId: "trimVideo",
  summary: "Trim a video",
  description: "Cuts [start, end) out of a video.",
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "video.trim", sourceUrl, p),
};
