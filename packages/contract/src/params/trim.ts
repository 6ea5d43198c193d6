import { Seconds } from "./fields.ts";
import { exactlyOneOf } from "./one-of.ts";
import { z } from "./zod.ts";

/** start (required), and exactly one of end or duration, with end > start (decisions.md §4). */
const trimShape = {
  start: Seconds.openapi({ description: "Start in seconds (≥ 0; beyond the media's duration → 400)." }),
  end: Seconds.optional().openapi({ description: "End in seconds (> start); or give duration." }),
  duration: z
    .number()
    .gt(0)
    .max(86_400 * 7)
    .optional()
    .openapi({ description: "Length in seconds; or give end." }),
};

/** The document's statement of trimWindow's one-of. */
const endOrDuration = exactlyOneOf([
  { title: "Until end", field: "end" },
  { title: "For duration", field: "duration" },
]);

function trimWindow(p: { start: number; end?: number; duration?: number }, ctx: z.RefinementCtx) {
  if (p.end !== undefined && p.duration !== undefined) {
    ctx.addIssue({ code: "custom", path: ["duration"], message: "Give either end or duration, not both." });
  } else if (p.end === undefined && p.duration === undefined) {
    ctx.addIssue({ code: "custom", path: ["end"], message: "Give exactly one of end or duration." });
  } else if (p.end !== undefined && p.end <= p.start) {
    ctx.addIssue({ code: "custom", path: ["end"], message: "end must be greater than start." });
  }
}

export const VideoTrimParamsSchema = z
  .strictObject({
    ...trimShape,
    mode: z.enum(["accurate", "fast"]).optional().openapi({
      description:
        "accurate (default): re-encoded, presenting what a player presents over [start, end): the frame shown at start from 0, each later frame at its source time − start, the last one until end. fast: the video stream-copied from the keyframe presented last at or before start (the result reports that keyframe as start), presented exactly up to end (or to the source video's end before it; the result reports that end), no frame shown at or after it, and its audio cut to the same interval; re-encoded when no copy can present exactly that (copied: false), as a B-frame Matroska/WebM video whose copy would lose a frame shown before end.",
    }),
  })
  .superRefine(trimWindow)
  .openapi("VideoTrimParams", endOrDuration);

export const AudioTrimParamsSchema = z
  .strictObject(trimShape)
  .superRefine(trimWindow)
  .openapi("AudioTrimParams", endOrDuration);
