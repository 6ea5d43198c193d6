import { runOnEngine } from "./engine-runner";
import type { WorkerOperation } from "./types";

export const videoExtractAudio: WorkerOperation<"video.extract-audio"> = {
  operationId: "extractAudio",
  summary: "Extract the audio track of a video",
  description: "A source without an audio stream → 415 with a detail that says so.",
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "video.extract-audio", sourceUrl, p),
};
