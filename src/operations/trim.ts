import { z } from "@hono/zod-openapi";
import { Seconds } from "./schemas";

/** start (required), and exactly one of end or duration, with end > start (decisions.md §4). */
export const trimShape = {
  start: Seconds.openapi({ description: "Start in seconds (≥ 0; beyond the media's duration → 400)." }),
  end: Seconds.optional().openapi({ description: "End in seconds (> start); or give duration." }),
  duration: z
    .number()
    .gt(0)
    .max(86_400 * 7)
    .optional()
    .openapi({ description: "Length in seconds; or give end." }),
};

export function trimWindow(p: { start: number; end?: number; duration?: number }, ctx: z.RefinementCtx) {
  if ((p.end === undefined) === (p.duration === undefined)) {
    ctx.addIssue({ code: "custom", path: ["end"], message: "Give exactly one of end or duration." });
  } else if (p.end !== undefined && p.end <= p.start) {
    ctx.addIssue({ code: "custom", path: ["end"], message: "end must be greater than start." });
  }
}

export const trimResultShape = {
  duration: z.number().openapi({ description: "Duration of the output in seconds." }),
  start: z
    .number()
    .openapi({ description: "Actual start (fast mode: the keyframe at or before the asked start)." }),
  end: z.number(),
};
