import { z } from "@hono/zod-openapi";
import { markPaintOptional, markSourceShape } from "../marks/schema";

/** Pieces shared by the operations' params and results (decisions.md §4 and §5). */

export const Seconds = z
  .number()
  .min(0)
  .max(86_400 * 7);

/**
 * The watermark parameters of video.watermark: the mark params of src/marks/schema.ts, the defaults described
 * and applied by the engine.
 */
export const watermarkShape = { ...markSourceShape, ...markPaintOptional };

const Iso = z.string().openapi({ format: "date-time" });

/** Fields of every file-producing result. */
export const fileResultShape = {
  id: z
    .string()
    .openapi({ description: "ULID of the result (the request id).", example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB" }),
  type: z.string().openapi({ example: "video.trim" }),
  url: z.string().openapi({ format: "uri", description: "Signed, expiring URL of the produced file." }),
  expires_at: Iso.openapi({ description: "When the file and its URL expire." }),
  format: z.string().openapi({ example: "mp4" }),
  size_bytes: z.number().int(),
};

export const dimensionsShape = { width: z.number().int(), height: z.number().int() };
