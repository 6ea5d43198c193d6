import { Seconds } from "./fields.ts";
import { z } from "./zod.ts";

/** video.extract-cover (decisions.md §4): one frame, optionally resized, as JPEG, PNG or WebP. */
export const VideoExtractCoverParamsSchema = z
  .strictObject({
    time: Seconds.optional().openapi({
      description: "Second of the frame; default 1 s, or the middle of videos shorter than 2 s.",
    }),
    format: z.enum(["jpeg", "png", "webp"]).optional().openapi({ description: "Default jpeg." }),
    width: z
      .number()
      .int()
      .min(1)
      .max(8192)
      .optional()
      .openapi({ description: "Resize keeping the aspect ratio." }),
    height: z
      .number()
      .int()
      .min(1)
      .max(8192)
      .optional()
      .openapi({ description: "Resize keeping the aspect ratio." }),
    quality: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .openapi({ description: "jpeg/webp quality 1–100; default 85; not with png (lossless)." }),
  })
  .superRefine((p, ctx) => {
    if (p.format === "png" && p.quality !== undefined)
      ctx.addIssue({ code: "custom", path: ["quality"], message: "Applies to jpeg and webp only." });
  })
  .openapi("VideoExtractCoverParams");
