import { z } from "@hono/zod-openapi";
import { runOnEngine } from "./engine-runner";
import { dimensionsShape, fileResultShape, oneMark, Seconds, watermarkShape } from "./schemas";
import { defineOperation } from "./types";

const params = z
  .strictObject({
    ...watermarkShape,
    start: Seconds.optional().openapi({ description: "Second at which the mark appears; default 0." }),
    end: Seconds.optional().openapi({ description: "Second at which it disappears; default the end." }),
  })
  .superRefine(oneMark)
  .superRefine((p, ctx) => {
    if (p.start !== undefined && p.end !== undefined && p.end <= p.start) {
      ctx.addIssue({ code: "custom", path: ["end"], message: "end must be greater than start." });
    }
  })
  .openapi("VideoWatermarkParams");

export const videoWatermark = defineOperation({
  type: "video.watermark",
  operationId: "watermarkVideo",
  summary: "Watermark a video",
  description:
    "Overlays a logo or a text mark (bundled DejaVu Sans) on a video. Output: MP4 (H.264 + AAC, audio copied when possible, faststart).",
  cost: 5,
  params,
  example: { text: "© Acme", position: "bottom-right", opacity: 0.6 },
  result: z
    .object({ ...fileResultShape, ...dimensionsShape, duration: z.number() })
    .openapi("VideoWatermarkResult"),
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "video.watermark", "video", sourceUrl, p),
});
