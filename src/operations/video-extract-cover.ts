import { z } from "@hono/zod-openapi";
import { runOnEngine } from "./engine-runner";
import { dimensionsShape, fileResultShape, Seconds } from "./schemas";
import { defineOperation } from "./types";

const params = z
  .strictObject({
    time: Seconds.optional().openapi({
      description: "Second of the frame; default 1 s, or the middle of videos shorter than 2 s.",
    }),
    format: z.enum(["jpeg", "png", "webp"]).optional().openapi({ description: "Default jpeg." }),
    width: z
      .number()
      .int()
      .min(1)
      .max(8192)
      .optional()
      .openapi({ description: "Resize keeping the aspect ratio." }),
    height: z
      .number()
      .int()
      .min(1)
      .max(8192)
      .optional()
      .openapi({ description: "Resize keeping the aspect ratio." }),
    quality: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .openapi({ description: "jpeg/webp quality 1–100; default 85." }),
  })
  .openapi("VideoExtractCoverParams");

export const videoExtractCover = defineOperation({
  type: "video.extract-cover",
  operationId: "extractCover",
  summary: "Extract a cover image from a video",
  description: "One frame of the video as JPEG, PNG or WebP, optionally resized.",
  cost: 1,
  params,
  example: { time: 2.5, format: "webp", width: 640 },
  result: z.object({ ...fileResultShape, ...dimensionsShape }).openapi("VideoExtractCoverResult"),
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "video.extract-cover", "image", sourceUrl, p),
});
