import { z } from "@hono/zod-openapi";
import { HexColor, POSITIONS, TEXT_SCRIPTS, textStyleShape } from "../images";
import { HttpUrl } from "../util/http-url";

/** Pieces shared by the operations' params and results (decisions.md §4 and §5). */

export const Seconds = z
  .number()
  .min(0)
  .max(86_400 * 7);

/** The watermark parameters shared by image.watermark and video.watermark. */
export const watermarkShape = {
  watermark_url: HttpUrl.optional().openapi({
    description: "Public http(s) URL of a PNG, WebP or JPEG logo; alpha respected.",
  }),
  text: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .openapi({
      description: `A text mark (1–200 characters, "\\n" starts a new line) instead of a logo. Shaped with bidi and font fallback: ${TEXT_SCRIPTS}. Characters no font covers are refused with 400 naming them.`,
    }),
  ...textStyleShape,
  font_size: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .openapi({ description: "Text size in px; default 5% of the base height." }),
  color: HexColor.optional().openapi({
    description: "Text color #RRGGBB[AA]; default #FFFFFF.",
    example: "#FFFFFF",
  }),
  position: z.enum(POSITIONS).optional().openapi({ description: "Default bottom-right." }),
  margin: z
    .number()
    .int()
    .min(0)
    .max(1000)
    .optional()
    .openapi({ description: "Distance from the edges in px; default 16." }),
  opacity: z.number().min(0).max(1).optional().openapi({ description: "0–1; default 0.5." }),
  scale: z
    .number()
    .gt(0)
    .max(1)
    .optional()
    .openapi({ description: "Logo width as a fraction of the base width, (0, 1]; default 0.2." }),
};

/** Exactly one of watermark_url or text. */
export function oneMark(params: { watermark_url?: string; text?: string }, ctx: z.RefinementCtx) {
  if ((params.watermark_url === undefined) === (params.text === undefined)) {
    ctx.addIssue({
      code: "custom",
      path: [params.text === undefined ? "watermark_url" : "text"],
      message: "Give exactly one of watermark_url or text.",
    });
  }
}

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
