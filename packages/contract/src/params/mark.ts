import { HexColor, HttpUrl, UploadId } from "./fields.ts";
import { exactlyOneOf } from "./one-of.ts";
import { z } from "./zod.ts";

/**
 * The mark params of image.watermark and video.watermark (a logo or a text mark), written once: the field
 * schemas, their OpenAPI wording and the one-of rule. The two operations differ only in the defaults:
 * image.watermark applies them (the Worker draws with them); video.watermark documents them and leaves them
 * out, because the engine applies them itself and refuses text params next to a logo (a defaulted `color`
 * would be one).
 */

/** The nine places a mark can go. */
export const POSITIONS = [
  "top-left",
  "top",
  "top-right",
  "left",
  "center",
  "right",
  "bottom-left",
  "bottom",
  "bottom-right",
] as const;
export type Position = (typeof POSITIONS)[number];

/**
 * The scripts a text mark is drawn in, for the OpenAPI text: what the font chain covers (docs/decisions.md
 * "Text watermarks").
 */
export const TEXT_SCRIPTS =
  "Latin, Greek, Cyrillic, Arabic and Hebrew (shaped, right to left), the Indic scripts Devanagari, Bengali, Gurmukhi, Gujarati, Oriya (Odia), Tamil, Telugu, Kannada, Malayalam and Sinhala, Thai, Chinese (Simplified and Traditional), Japanese and Korean, and colour emoji (Noto Color Emoji: Unicode 15.1 sequences, ZWJ, flags, keycaps and skin tones included)";

/** The defaults of the placement and paint params (applied by image.watermark, by the engine for video). */
export const MARK_DEFAULTS = {
  color: "#FFFFFF",
  position: "bottom-right",
  margin: 16,
  opacity: 0.5,
  scale: 0.2,
} as const;

/** The params without a default: the mark itself and the text's style, one instance for both operations. */
export const markSourceShape = {
  watermark_url: HttpUrl.optional().openapi({
    description:
      "Public http(s) URL of the logo: PNG, WebP or JPEG (alpha respected). Exactly one of watermark_url, watermark_upload_id or text.",
    example: "https://example.com/logo.png",
  }),
  watermark_upload_id: UploadId.optional().openapi({
    description:
      "The logo as a complete upload of this account (POST /v1/uploads), in place of watermark_url. Another account's or an unknown id → 404, an incomplete one → 409, both naming params.watermark_upload_id.",
    example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB",
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
    description: "Text size in px. Default: 5% of the image's or the frame's height.",
    example: 48,
  }),
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

/** A default as the OpenAPI document says it (the Worker's src/routes/docs/document.ts words applied defaults the same). */
const said = (value: unknown) => `Default: \`${JSON.stringify(value)}\`.`;

/** The placement and paint params without their defaults, and the one wording of each. */
const paint = {
  color: HexColor,
  position: z.enum(POSITIONS),
  margin: z.number().int().min(0).max(1000),
  opacity: z.number().min(0).max(1),
  scale: z.number().gt(0).max(1),
};
const paintDocs = {
  color: {
    description: `Text colour #RRGGBB[AA]; its alpha multiplies opacity. ${said(MARK_DEFAULTS.color)}`,
    example: "#FFFFFFCC",
  },
  position: { description: `Where the mark goes. ${said(MARK_DEFAULTS.position)}` },
  margin: {
    description: `Distance in px from the edges the position names. ${said(MARK_DEFAULTS.margin)}`,
    example: 16,
  },
  opacity: { description: `0 (invisible) to 1. ${said(MARK_DEFAULTS.opacity)}`, example: 0.5 },
  scale: {
    description: `Logo width as a fraction of the image's or the frame's width, aspect kept (logos only). ${said(MARK_DEFAULTS.scale)}`,
    example: 0.2,
  },
};

/** Placement and paint with the defaults applied (image.watermark). */
export const markPaintWithDefaults = {
  color: paint.color.default(MARK_DEFAULTS.color).openapi(paintDocs.color),
  position: paint.position.default(MARK_DEFAULTS.position).openapi(paintDocs.position),
  margin: paint.margin.default(MARK_DEFAULTS.margin).openapi(paintDocs.margin),
  opacity: paint.opacity.default(MARK_DEFAULTS.opacity).openapi(paintDocs.opacity),
  scale: paint.scale.default(MARK_DEFAULTS.scale).openapi(paintDocs.scale),
};

/** Placement and paint, optional, the defaults only described (video.watermark: the engine applies them). */
export const markPaintOptional = {
  color: paint.color.optional().openapi(paintDocs.color),
  position: paint.position.optional().openapi(paintDocs.position),
  margin: paint.margin.optional().openapi(paintDocs.margin),
  opacity: paint.opacity.optional().openapi(paintDocs.opacity),
  scale: paint.scale.optional().openapi(paintDocs.scale),
};

/** Exactly one of watermark_url, watermark_upload_id or text (a superRefine of both operations' params). */
export function oneMark(
  params: { watermark_url?: string; watermark_upload_id?: string; text?: string },
  ctx: z.RefinementCtx,
) {
  const hasUrl = params.watermark_url !== undefined;
  const hasUpload = params.watermark_upload_id !== undefined;
  const hasText = params.text !== undefined;
  if (hasUrl && hasUpload)
    ctx.addIssue({
      code: "custom",
      path: ["watermark_upload_id"],
      message: "Give either watermark_url or watermark_upload_id, not both.",
    });
  if ((hasUrl || hasUpload) && hasText)
    ctx.addIssue({ code: "custom", path: ["text"], message: "Give either watermark_url or text, not both." });
  if (!hasUrl && !hasUpload && !hasText)
    ctx.addIssue({
      code: "custom",
      path: ["watermark_url"],
      message: "One of watermark_url, watermark_upload_id or text is required.",
    });
}

/**
 * The document's statement of oneMark: a logo by URL, a logo by upload, or a text, exactly one; `forbids` adds
 * the params an operation refuses next to a logo or a text (video.watermark's).
 */
export function markVariants(forbids: { logo?: readonly string[]; text?: readonly string[] } = {}) {
  return exactlyOneOf([
    { title: "Logo by URL", field: "watermark_url", forbids: forbids.logo ?? [] },
    { title: "Logo by upload", field: "watermark_upload_id", forbids: forbids.logo ?? [] },
    { title: "Text", field: "text", forbids: forbids.text ?? [] },
  ]);
}
