import { z } from "@hono/zod-openapi";
import { AudioTrimParamsSchema } from "@p6/contract/params";
import { runOnEngine } from "./engine-runner";
import { fileResultShape } from "./schemas";
import { trimResultShape } from "./trim";
import { defineOperation } from "./types";

export const audioTrim = defineOperation({
  type: "audio.trim",
  operationId: "trimAudio",
  summary: "Trim audio",
  description:
    "Cuts exactly [start, end) out of an audio file (or a video's audio): the cut is re-encoded in the source's codec (lossless codecs stay lossless), since a stream copy keeps whole packets and hidden audio before the start; a window that is the whole stream is copied.",
  cost: 1,
  params: AudioTrimParamsSchema,
  example: { start: 0, end: 30 },
  result: z
    .object({
      ...fileResultShape,
      ...trimResultShape,
      copied: z.boolean().openapi({
        description:
          "true when the audio stream was copied unchanged (the window is the whole stream); false when the cut was re-encoded to be exact.",
      }),
    })
    .openapi("AudioTrimResult"),
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "audio.trim", "audio", sourceUrl, p),
});
