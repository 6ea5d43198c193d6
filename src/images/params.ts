import { z } from "@hono/zod-openapi";
import { HttpUrl } from "../util/http-url";
import { POSITIONS } from "./composite";

/** Parameters of image.watermark (decisions.md §4). Unknown keys are rejected. */
export const ImageWatermarkParamsSchema = z
  .strictObject({
    watermark_url: HttpUrl.optional().openapi({
      description:
        "Public http(s) URL of the logo: PNG, WebP or JPEG (alpha respected). Exactly one of watermark_url or text.",
      example: "https://example.com/logo.png",
    }),
    text: z.string().min(1).max(200).optional().openapi({
      description:
        'Text to draw instead of a logo (1–200 characters, "\\n" starts a new line), in DejaVu Sans.',
      example: "© Example 2026",
    }),
    font_size: z.number().int().min(1).max(1000).optional().openapi({
      description: "Text size in px. Default: 5% of the image height.",
      example: 48,
    }),
    color: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$/, "Must be #RRGGBB or #RRGGBBAA.")
      .default("#FFFFFF")
      .openapi({
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
