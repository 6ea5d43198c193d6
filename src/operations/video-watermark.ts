import { z } from "@hono/zod-openapi";
import { TEXT_SCRIPTS, VideoWatermarkParamsSchema } from "@p6/contract/params";
import { runOnEngine } from "./engine-runner";
import { dimensionsShape, fileResultShape } from "./schemas";
import { engineMarkSize, engineTextMark } from "./text-mark";
import { defineOperation } from "./types";

export const videoWatermark = defineOperation({
  type: "video.watermark",
  operationId: "watermarkVideo",
  summary: "Watermark a video",
  description: `Overlays a logo or a text mark on a video. Text is shaped with bidi and font fallback (${TEXT_SCRIPTS}) and drawn exactly as image.watermark draws it: the same bitmap is overlaid on every frame. Without font_size the mark is drawn once and scaled to 5% of the frame height. Text with characters no font covers is refused with 400 naming them, and so are params that do not apply to the mark given (font_size, color, font_family, font_weight, stroke or shadow with a logo; scale with a text) and control characters in the text other than a line break. Output: MP4 (H.264 + AAC, audio copied when possible, faststart).`,
  cost: 5,
  params: VideoWatermarkParamsSchema,
  example: { text: "© Acme", position: "bottom-right", opacity: 0.6 },
  result: z
    .object({ ...fileResultShape, ...dimensionsShape, duration: z.number() })
    .openapi("VideoWatermarkResult"),
  async run(ctx, sourceUrl, p) {
    // A text mark is drawn here and overlaid by the engine (src/operations/text-mark.ts).
    const textMark =
      p.text === undefined
        ? undefined
        : await engineTextMark(ctx, { ...p, text: p.text }, engineMarkSize({ ...p, text: p.text }));
    return runOnEngine(
      ctx,
      "video.watermark",
      "video",
      sourceUrl,
      p,
      textMark ? { text_mark: textMark } : {},
    );
  },
});
