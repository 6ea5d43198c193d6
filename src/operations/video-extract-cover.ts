import { runOnEngine } from "./engine-runner";
import type { WorkerOperation } from "./types";

export const videoExtractCover: WorkerOperation<"video.extract-cover"> = {
  operationId: "extractCover",
  summary: "Extract a cover image from a video",
  description: "One frame of the video as JPEG, PNG or WebP, optionally resized.",
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "video.extract-cover", sourceUrl, p),
};
