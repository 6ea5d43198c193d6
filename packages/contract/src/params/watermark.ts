import { Seconds } from "./fields.ts";
import { markPaintOptional, markPaintWithDefaults, markSourceShape, markVariants, oneMark } from "./mark.ts";
import { z } from "./zod.ts";

/**
 * image.watermark (decisions.md §4): the mark params (mark.ts) with their defaults applied, and the output
 * format. Unknown keys are rejected. The Worker sends the engine its parsed params, defaults filled in, so
 * every key is accepted with either mark.
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
  .openapi("ImageWatermarkParams", markVariants());

/** The params of a text mark that mean nothing next to a logo. */
const TEXT_ONLY = ["font_size", "color", "font_family", "font_weight", "stroke", "shadow"] as const;

/**
 * video.watermark's own rules, beyond the shape: the defaults are the engine's, so a param that does not apply
 * to the chosen mark was given by the caller and is refused (a text param next to a logo, by URL or by upload,
 * `scale` next to a text), and so is a control character in the text but the line break (the mark is one
 * bitmap per video).
 */
function videoMark(
  p: {
    watermark_url?: string | undefined;
    watermark_upload_id?: string | undefined;
    text?: string | undefined;
  } & Partial<Record<(typeof TEXT_ONLY)[number] | "scale", unknown>>,
  ctx: z.RefinementCtx,
) {
  const logo = p.watermark_url !== undefined || p.watermark_upload_id !== undefined;
  if (logo && p.text === undefined) {
    for (const key of TEXT_ONLY) {
      if (p[key] !== undefined)
        ctx.addIssue({ code: "custom", path: [key], message: "Applies to text watermarks only." });
    }
  }
  if (p.text !== undefined && !logo) {
    if (p.scale !== undefined)
      ctx.addIssue({ code: "custom", path: ["scale"], message: "Applies to logo watermarks only." });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    if (/[\u0000-\u0009\u000b-\u001f\u007f]/.test(p.text))
      ctx.addIssue({
        code: "custom",
        path: ["text"],
        message: 'Must not contain control characters other than a line break ("\\n").',
      });
  }
}

/** video.watermark (decisions.md §4): the mark params, their defaults left to the engine, and its window. */
export const VideoWatermarkParamsSchema = z
  .strictObject({
    ...markSourceShape,
    ...markPaintOptional,
    start: Seconds.optional().openapi({ description: "Second at which the mark appears; default 0." }),
    end: Seconds.optional().openapi({ description: "Second at which it disappears; default the end." }),
  })
  .superRefine(oneMark)
  .superRefine(videoMark)
  .superRefine((p, ctx) => {
    if (p.start !== undefined && p.end !== undefined && p.end <= p.start) {
      ctx.addIssue({ code: "custom", path: ["end"], message: "end must be greater than start." });
    }
  })
  .openapi("VideoWatermarkParams", markVariants({ logo: TEXT_ONLY, text: ["scale"] }));

/** image.watermark's params as a caller writes them (defaults optional). */
export type ImageWatermarkParams = z.input<typeof ImageWatermarkParamsSchema>;
