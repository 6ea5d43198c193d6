import { checkDrawable, renderTextMark, UndrawableTextError } from "../text/mark";
import { TextMarkError } from "./errors";
import type { Rgba } from "./rgba";

/**
 * Text marks, for every caller (image.watermark in the Worker, and the bitmap the engine overlays for
 * video.watermark and large images): the params mapped onto src/text/mark.ts, with the two refusals the
 * client must hear about: characters no font covers, and a mark too large to render.
 */

/** The text params of both watermark operations (@p6/contract/params, packages/contract/src/params/mark.ts). */
export type TextMarkParams = {
  text: string;
  font_size?: number | undefined;
  color?: string | undefined;
  opacity?: number | undefined;
  font_family?: "sans" | "serif" | "mono" | undefined;
  font_weight?: "regular" | "bold" | undefined;
  stroke?: { color: string; width: number } | undefined;
  shadow?: { color: string; dx: number; dy: number; blur?: number | undefined } | undefined;
};

/** Default text size: 5% of the base's (shown) height, as it has always been. */
export const defaultFontSize = (baseHeight: number) => Math.max(1, Math.round(baseHeight * 0.05));

/**
 * The largest mark rendered, in pixels (16 MB of RGBA, plus as much again inside resvg's WASM memory, which
 * never shrinks once grown): a 200-character line at 108 px (the default size on 2160p video) fits.
 */
export const MAX_MARK_PIXELS = 4_000_000;

/**
 * An upper bound of the mark's size before it is drawn: no glyph of the covered scripts is much wider than
 * 1.1 em (CJK are 1 em), lines are set 1.5 em apart at most, and stroke, shadow and blur widen the ink.
 */
export function markBound(p: TextMarkParams, size: number): { width: number; height: number } {
  const lines = p.text.split("\n");
  const longest = Math.max(...lines.map((line) => [...line].length));
  const stroke = p.stroke ? 2 * p.stroke.width : 0;
  const shadow = p.shadow ? 3 * (p.shadow.blur ?? 0) : 0;
  return {
    width: Math.ceil(longest * size * 1.1 + stroke + Math.abs(p.shadow?.dx ?? 0) + 2 * shadow),
    height: Math.ceil(lines.length * size * 1.5 + stroke + Math.abs(p.shadow?.dy ?? 0) + 2 * shadow),
  };
}

/** The code points of `characters` for a message: "水" (U+6C34). */
const describe = (characters: string[]) =>
  characters
    .map((c) => `"${c}" (U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")})`)
    .join(", ");

/** The budget refusal: a mark at `size` whose upper bound exceeds MAX_MARK_PIXELS. */
function checkBound(p: TextMarkParams, size: number): void {
  const bound = markBound(p, size);
  if (bound.width * bound.height > MAX_MARK_PIXELS)
    throw new TextMarkError(
      "params.font_size",
      `The text mark at ${size} px could take up to ${bound.width}×${bound.height} px; at most ${MAX_MARK_PIXELS / 1e6} megapixels are drawn. Use a smaller font_size, or break long lines with "\\n".`,
    );
}

/** UndrawableTextError as the public refusal naming the characters; anything else unchanged. */
function undrawable(error: unknown): unknown {
  return error instanceof UndrawableTextError
    ? new TextMarkError(
        "params.text",
        `No font can draw ${error.characters.length === 1 ? "this character" : "these characters"} of the text: ${describe(error.characters)}.`,
      )
    : error;
}

/** CRLF is a newline; other control characters are drawn as spaces (video refuses them at validation). */
const drawnText = (text: string) =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point
  text.replace(/\r\n/g, "\n").replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, " ");

/**
 * The refusals of renderMark without drawing (for a task, before anything is reserved): characters no font
 * covers, and, when `size` is known (font_size given), a mark over the pixel budget. Throws TextMarkError;
 * FontUnavailableError (src/text/fonts.ts) when the R2 fonts cannot be read now.
 */
export async function checkMark(p: TextMarkParams, size: number | undefined, env: { FONTS?: R2Bucket }) {
  if (size !== undefined) checkBound(p, size);
  try {
    await checkDrawable(drawnText(p.text), p.font_family ?? "sans", p.font_weight ?? "regular", env);
  } catch (error) {
    throw undrawable(error);
  }
}

/**
 * The mark at `size` px, opacity and colour alpha applied (composite it at opacity 1); undefined when nothing
 * is drawn. Throws TextMarkError for characters no font covers and for marks over MAX_MARK_PIXELS.
 */
export async function renderMark(
  p: TextMarkParams,
  size: number,
  env: { FONTS?: R2Bucket },
): Promise<Rgba | undefined> {
  checkBound(p, size);
  try {
    return await renderTextMark({
      text: drawnText(p.text),
      size,
      color: p.color ?? "#FFFFFF",
      opacity: p.opacity ?? 0.5,
      fontFamily: p.font_family ?? "sans",
      fontWeight: p.font_weight ?? "regular",
      ...(p.stroke ? { stroke: p.stroke } : {}),
      ...(p.shadow
        ? { shadow: { color: p.shadow.color, dx: p.shadow.dx, dy: p.shadow.dy, blur: p.shadow.blur ?? 0 } }
        : {}),
      env,
    });
  } catch (error) {
    throw undrawable(error);
  }
}
