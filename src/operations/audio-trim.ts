import { runOnEngine } from "./engine-runner";
import type { WorkerOperation } from "./types";

export const audioTrim: WorkerOperation<"audio.trim"> = {
  operationId: "trimAudio",
  summary: "Trim audio",
  description:
    "Cuts exactly [start, end) out of an audio file (or a video's audio): the cut is re-encoded in the source's codec (lossless codecs stay lossless), since a stream copy keeps whole packets and hidden audio before the start; a window that is the whole stream is copied.",
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "audio.trim", sourceUrl, p),
};
