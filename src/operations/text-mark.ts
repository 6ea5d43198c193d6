import { ApiError } from "../errors/api-error";
import { defaultFontSize, encodePng, renderMark, TextMarkError, type TextMarkParams } from "../images";
import { MAX_MARK_PIXELS, markBound } from "../images/text";
import { bytesToBase64 } from "../util/encoding";
import type { RunContext } from "./types";

/**
 * Text marks for the engine (issue 17): the Worker draws the mark (src/text/) and sends it as the job's
 * `text_mark` PNG; the engine overlays it like a logo and draws no text, so video and large images show
 * the same pixels as images watermarked here.
 */

/** The tallest default size: 5% of the highest frame the engine accepts (8192×4352). */
const LARGEST_DEFAULT_SIZE = defaultFontSize(4352);

/**
 * The font size to draw at. With font_size, exactly that. Without, the default is 5% of a frame height
 * the Worker may not know (video): the mark is drawn at the largest default size that fits the mark budget,
 * and the engine scales it down (or, for a long text on very tall video, up) to 5% of the frame's height.
 */
export function engineMarkSize(p: TextMarkParams, frameHeight?: number): number {
  if (p.font_size !== undefined) return p.font_size;
  if (frameHeight !== undefined) return defaultFontSize(frameHeight);
  let size = LARGEST_DEFAULT_SIZE;
  const fits = (s: number) => {
    const bound = markBound(p, s);
    return bound.width * bound.height <= MAX_MARK_PIXELS;
  };
  while (size > 8 && !fits(size)) size = Math.floor(size * 0.9);
  return size;
}

/**
 * The bindings the text renderer reads: the FONTS bucket (fonts too large for the bundle) when this
 * deployment has one.
 */
export function fontsOf(env: Env): { FONTS?: R2Bucket } {
  const fonts = (env as Partial<Record<"FONTS", R2Bucket>>).FONTS;
  return fonts ? { FONTS: fonts } : {};
}

/** A TextMarkError as the public 400 naming its field (the characters no font covers, or the size). */
export function textMarkApiError(error: unknown): unknown {
  return error instanceof TextMarkError ? ApiError.invalid(error.field, error.message) : error;
}

/** The job's text_mark field: the mark drawn at `size`, as a base64 PNG (absent when nothing is drawn). */
export async function engineTextMark(
  ctx: Pick<RunContext, "env">,
  p: TextMarkParams,
  size: number,
): Promise<{ png?: string; font_size: number }> {
  let mark: Awaited<ReturnType<typeof renderMark>>;
  try {
    mark = (p.opacity ?? 0.5) > 0 ? await renderMark(p, size, fontsOf(ctx.env)) : undefined;
  } catch (error) {
    throw textMarkApiError(error);
  }
  if (!mark) return { font_size: size };
  return { png: bytesToBase64(await encodePng(mark)), font_size: size };
}
