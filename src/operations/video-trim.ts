import { z } from "@hono/zod-openapi";
import { VideoTrimParamsSchema } from "@p6/contract/params";
import { runOnEngine } from "./engine-runner";
import { dimensionsShape, fileResultShape } from "./schemas";
import { trimResultShape } from "./trim";
import { defineOperation } from "./types";

export const videoTrim = defineOperation({
  type: "video.trim",
  operationId: "trimVideo",
  summary: "Trim a video",
  description: "Cuts [start, end) out of a video.",
  cost: 2,
  params: VideoTrimParamsSchema,
  example: { start: 5, duration: 10, mode: "accurate" },
  result: z
    .object({
      ...fileResultShape,
      ...dimensionsShape,
      ...trimResultShape,
      copied: z.boolean().openapi({
        description:
          "true when the video was stream-copied from a keyframe (fast; its audio re-encoded to exactly the copied video's interval); false when the cut was re-encoded (accurate, or a fast cut whose keyframe lies before the source's presented start, which a copy cannot present exactly).",
      }),
    })
    .openapi("VideoTrimResult"),
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "video.trim", "video", sourceUrl, p),
});
