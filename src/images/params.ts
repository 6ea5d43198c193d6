import { z } from "@hono/zod-openapi";
import { HttpUrl } from "../util/http-url";
import { POSITIONS } from "./composite";

/** "#RRGGBB" or "#RRGGBBAA" (the alpha multiplies opacity). */
export const HexColor = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$/, "Must be #RRGGBB or #RRGGBBAA.");

/**
 * The scripts a text mark is drawn in, for the OpenAPI text: what the font chain covers (docs/decisions.md
 * "Text watermarks").
 */
export const TEXT_SCRIPTS =
  "Latin, Greek, Cyrillic, Arabic and Hebrew (shaped, right to left), Devanagari and other Indic scripts, Thai, Chinese (Simplified and Traditional), Japanese and Korean, and colour emoji (Noto Color Emoji: Unicode 15.1 sequences, ZWJ, flags, keycaps and skin tones included)";

/**
 * The text style params shared by image.watermark and video.watermark (issue 17); the Worker draws the mark
 * with them (src/text/mark.ts) and the engine only overlays the bitmap, though it validates them too.
 */
export const textStyleShape = {
  font_family: z.enum(["sans", "serif", "mono"]).optional().openapi({
    description:
      "Typeface of a text mark: sans (default), serif or mono; each with fallbacks for every script covered.",
  }),
  font_weight: z
    .enum(["regular", "bold"])
    .optional()
    .openapi({ description: "Weight of a text mark: regular (default) or bold." }),
  stroke: z
    .strictObject({
      color: HexColor.openapi({ description: "Outline colour #RRGGBB[AA].", example: "#000000" }),
      width: z.number().gt(0).max(50).openapi({ description: "Outline width in px, (0, 50].", example: 2 }),
    })
    .optional()
    .openapi("TextStroke", {
      description: "An outline around the glyphs, for legibility on busy backgrounds.",
    }),
  shadow: z
    .strictObject({
      color: HexColor.openapi({ description: "Shadow colour #RRGGBB[AA].", example: "#00000080" }),
      dx: z.number().min(-100).max(100).openapi({ description: "Horizontal offset in px.", example: 2 }),
      dy: z.number().min(-100).max(100).openapi({ description: "Vertical offset in px.", example: 2 }),
      blur: z.number().min(0).max(50).optional().openapi({ description: "Blur radius in px; default 0." }),
    })
    .optional()
    .openapi("TextShadow", { description: "A shadow under the glyphs, for legibility on busy backgrounds." }),
};

/** Parameters of image.watermark (decisions.md §4). Unknown keys are rejected. */
export const ImageWatermarkParamsSchema = z
  .strictObject({
    watermark_url: HttpUrl.optional().openapi({
      description:
        "Public http(s) URL of the logo: PNG, WebP or JPEG (alpha respected). Exactly one of watermark_url or text.",
      example: "https://example.com/logo.png",
    }),
    text: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .openapi({
        description: `Text to draw instead of a logo (1–200 characters, "\\n" starts a new line). Shaped with bidi and font fallback: ${TEXT_SCRIPTS}. Characters no font covers are refused with 400 naming them.`,
        example: "© Example 2026",
      }),
    font_size: z.number().int().min(1).max(1000).optional().openapi({
      description: "Text size in px. Default: 5% of the image height.",
      example: 48,
    }),
    ...textStyleShape,
    color: HexColor.default("#FFFFFF").openapi({
      description: "Text color #RRGGBB[AA]; its alpha multiplies opacity.",
      example: "#FFFFFFCC",
    }),
    position: z.enum(POSITIONS).default("bottom-right").openapi({ description: "Where the mark goes." }),
    margin: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .default(16)
      .openapi({ description: "Distance in px from the edges the position names.", example: 16 }),
    opacity: z
      .number()
      .min(0)
      .max(1)
      .default(0.5)
      .openapi({ description: "0 (invisible) to 1.", example: 0.5 }),
    scale: z.number().gt(0).max(1).default(0.2).openapi({
      description: "Logo width as a fraction of the image width, aspect kept (logos only).",
      example: 0.2,
    }),
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
  .superRefine((params, ctx) => {
    const hasLogo = params.watermark_url !== undefined;
    const hasText = params.text !== undefined;
    if (hasLogo && hasText)
      ctx.addIssue({
        code: "custom",
        path: ["text"],
        message: "Give either watermark_url or text, not both.",
      });
    if (!hasLogo && !hasText)
      ctx.addIssue({
        code: "custom",
        path: ["watermark_url"],
        message: "One of watermark_url or text is required.",
      });
  })
  .openapi("ImageWatermarkParams");

/** What a caller may pass (defaults optional). */
export type ImageWatermarkParams = z.input<typeof ImageWatermarkParamsSchema>;
