import { z } from "@hono/zod-openapi";
import { VideoExtractAudioParamsSchema } from "@p6/contract/params";
import { runOnEngine } from "./engine-runner";
import { fileResultShape } from "./schemas";
import { defineOperation } from "./types";

export const videoExtractAudio = defineOperation({
  type: "video.extract-audio",
  operationId: "extractAudio",
  summary: "Extract the audio track of a video",
  description: "A source without an audio stream → 415 with a detail that says so.",
  cost: 2,
  params: VideoExtractAudioParamsSchema,
  example: { format: "mp3", bitrate: "192k" },
  result: z
    .object({ ...fileResultShape, duration: z.number().openapi({ description: "Seconds." }) })
    .openapi("VideoExtractAudioResult"),
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "video.extract-audio", "audio", sourceUrl, p),
});
