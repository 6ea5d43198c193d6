import { z } from "@hono/zod-openapi";

/** The result fields of both trims. */
export const trimResultShape = {
  duration: z.number().openapi({ description: "Duration of the output in seconds." }),
  start: z
    .number()
    .openapi({ description: "Actual start (fast mode: the keyframe at or before the asked start)." }),
  end: z.number(),
};
