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
        "accurate (default): re-encoded, presenting what a player presents over [start, end): the frame shown at start from 0, each later frame at its source time − start, the last one until end. fast: the video stream-copied from the keyframe presented last at or before start (the result reports that keyframe as start), with no frame shown at or after end (a B-frame video may so end a few frames before end; the result reports its end), and its audio cut to the same interval; re-encoded when no copy can present exactly that (copied: false).",
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
