import { z } from "@hono/zod-openapi";
import { runOnEngine } from "./engine-runner";
import { fileResultShape } from "./schemas";
import { defineOperation } from "./types";

const params = z
  .strictObject({
    format: z
      .enum(["mp3", "m4a", "wav", "flac", "opus", "original"])
      .optional()
      .openapi({ description: "Default mp3; original copies the stream." }),
    bitrate: z
      .string()
      .regex(/^\d{2,3}k$/, "Must be like 128k.")
      .refine((v) => {
        const kbps = Number.parseInt(v, 10);
        return kbps >= 32 && kbps <= 320;
      }, "Must be between 32k and 320k.")
      .optional()
      .openapi({ description: "32k–320k; default 128k for mp3, m4a and opus.", example: "192k" }),
    sample_rate: z
      .union([
        z.literal(8000),
        z.literal(11025),
        z.literal(16000),
        z.literal(22050),
        z.literal(24000),
        z.literal(32000),
        z.literal(44100),
        z.literal(48000),
        z.literal(96000),
      ])
      .optional()
      .openapi({ description: "Output sample rate in Hz; default the source's." }),
    channels: z
      .union([z.literal(1), z.literal(2)])
      .optional()
      .openapi({ description: "1 or 2; default the source's." }),
  })
  .openapi("VideoExtractAudioParams");

export const videoExtractAudio = defineOperation({
  type: "video.extract-audio",
  operationId: "extractAudio",
  summary: "Extract the audio track of a video",
  description: "A source without an audio stream → 415 with a detail that says so.",
  cost: 2,
  params,
  example: { format: "mp3", bitrate: "192k" },
  result: z
    .object({ ...fileResultShape, duration: z.number().openapi({ description: "Seconds." }) })
    .openapi("VideoExtractAudioResult"),
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "video.extract-audio", "audio", sourceUrl, p),
});
