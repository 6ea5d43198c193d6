import { z } from "@hono/zod-openapi";
import { runOnEngine } from "./engine-runner";
import { dimensionsShape, fileResultShape } from "./schemas";
import { trimResultShape, trimShape, trimWindow } from "./trim";
import { defineOperation } from "./types";

const params = z
  .strictObject({
    ...trimShape,
    mode: z.enum(["accurate", "fast"]).optional().openapi({
      description:
        "accurate (default): re-encoded, frame-exact. fast: stream copy from the keyframe at or before start; the result reports the actual start.",
    }),
  })
  .superRefine(trimWindow)
  .openapi("VideoTrimParams");

export const videoTrim = defineOperation({
  type: "video.trim",
  operationId: "trimVideo",
  summary: "Trim a video",
  description: "Cuts [start, end) out of a video.",
  cost: 2,
  params,
  example: { start: 5, duration: 10, mode: "accurate" },
  result: z.object({ ...fileResultShape, ...dimensionsShape, ...trimResultShape }).openapi("VideoTrimResult"),
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "video.trim", "video", sourceUrl, p),
});
