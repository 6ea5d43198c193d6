import { TEXT_SCRIPTS } from "@p6/contract/params";
import { runOnEngine } from "./engine-runner";
import { engineMarkSize, engineTextMark } from "./text-mark";
import type { WorkerOperation } from "./types";

export const videoWatermark: WorkerOperation<"video.watermark"> = {
  operationId: "watermarkVideo",
  summary: "Watermark a video",
  description: `Overlays a logo or a text mark on a video. Text is shaped with bidi and font fallback (${TEXT_SCRIPTS}) and drawn exactly as image.watermark draws it: the same bitmap is overlaid on every frame. Without font_size the mark is drawn once and scaled to 5% of the frame height. Text with characters no font covers is refused with 400 naming them, and so are params that do not apply to the mark given (font_size, color, font_family, font_weight, stroke or shadow with a logo; scale with a text) and control characters in the text other than a line break. Output: MP4 (H.264 + AAC, audio copied when possible, faststart).`,
  async run(ctx, sourceUrl, p) {
    // A text mark is drawn here and overlaid by the engine (src/operations/text-mark.ts).
    const textMark =
      p.text === undefined
        ? undefined
        : await engineTextMark(ctx, { ...p, text: p.text }, engineMarkSize({ ...p, text: p.text }));
    return runOnEngine(ctx, "video.watermark", sourceUrl, p, textMark ? { text_mark: textMark } : {});
  },
};
