import { ApiError } from "../errors/api-error";
import { defaultFontSize, encodePng, renderMark, TextMarkError, type TextMarkParams } from "../images";
import { checkMark, MAX_MARK_PIXELS, markBound } from "../images/text";
import { FontUnavailableError } from "../text/fonts";
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

/** Retry-After of a font the FONTS bucket cannot give now, in seconds: a deploy uploads it within minutes. */
export const FONT_RETRY_AFTER_SECONDS = 60;

/**
 * A TextMarkError as the public 400 naming its field (the characters no font covers, or the size). A font
 * missing from the FONTS bucket (or no bucket bound) is the deployment's fault, not the caller's: 503
 * SERVICE_UNAVAILABLE with Retry-After (a task waits and runs again), logged for the operator
 * (docs/decisions.md "Text watermarks").
 */
export function textMarkApiError(error: unknown): unknown {
  if (error instanceof TextMarkError) return ApiError.invalid(error.field, error.message);
  if (error instanceof FontUnavailableError) {
    console.error(JSON.stringify({ level: "error", event: "font_unavailable", error: error.message }));
    return new ApiError(
      "SERVICE_UNAVAILABLE",
      "A font this text needs cannot be read right now; retry after the delay in Retry-After.",
      { headers: { "Retry-After": String(FONT_RETRY_AFTER_SECONDS) }, cause: error },
    );
  }
  return error;
}

/** The text mark params of a watermark operation's parsed params, when it has a text mark. */
export function textMarkOf(params: unknown): TextMarkParams | undefined {
  const p = params as Partial<TextMarkParams> | null;
  return typeof p?.text === "string" ? (p as TextMarkParams) : undefined;
}

/**
 * What drawing the mark would refuse, checked before any work (a task before its credits are reserved, a
 * synchronous call before its key is claimed): the 400 naming characters no font covers, and with font_size
 * the 400 for a mark over the pixel budget. A font that cannot be read now refuses nothing here: the run
 * meets it (503, or a task that waits).
 */
export async function checkTextMark(env: Env, params: unknown): Promise<void> {
  const p = textMarkOf(params);
  if (!p) return;
  try {
    await checkMark(p, p.font_size, fontsOf(env));
  } catch (error) {
    if (error instanceof FontUnavailableError) return;
    throw textMarkApiError(error);
  }
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
