import { z } from "@hono/zod-openapi";
import { VideoExtractCoverParamsSchema } from "@p6/contract/params";
import { runOnEngine } from "./engine-runner";
import { dimensionsShape, fileResultShape } from "./schemas";
import { defineOperation } from "./types";

export const videoExtractCover = defineOperation({
  type: "video.extract-cover",
  operationId: "extractCover",
  summary: "Extract a cover image from a video",
  description: "One frame of the video as JPEG, PNG or WebP, optionally resized.",
  cost: 1,
  params: VideoExtractCoverParamsSchema,
  example: { time: 2.5, format: "webp", width: 640 },
  result: z.object({ ...fileResultShape, ...dimensionsShape }).openapi("VideoExtractCoverResult"),
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "video.extract-cover", "image", sourceUrl, p),
});
