import { z } from "@hono/zod-openapi";
import { markPaintWithDefaults, markSourceShape, oneMark } from "../marks/schema";

/**
 * Parameters of image.watermark (decisions.md §4): the mark params (src/marks/schema.ts) with their defaults
 * applied, and the output format. Unknown keys are rejected.
 */
export const ImageWatermarkParamsSchema = z
  .strictObject({
    ...markSourceShape,
    ...markPaintWithDefaults,
    format: z.enum(["same", "jpeg", "png", "webp"]).default("same").openapi({
      description: "Output format; same keeps the input's. JPEG output is flattened on white.",
    }),
    quality: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(85)
      .openapi({ description: "JPEG and WebP quality.", example: 85 }),
  })
  .superRefine(oneMark)
  .openapi("ImageWatermarkParams");

/** What a caller may pass (defaults optional). */
export type ImageWatermarkParams = z.input<typeof ImageWatermarkParamsSchema>;
