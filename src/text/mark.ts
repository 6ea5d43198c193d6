import FONT from "../../assets/fonts/DejaVuSans.ttf";
import type { Rgba } from "../images/rgba";
import { renderText } from "./render";

/**
 * The text-mark interface the watermark operations call (issue 17). THIS IS A STAND-IN written by the
 * callers' side (helper textA) so the image and video paths could be wired: helper textB owns src/text/ and
 * replaces the body (font chain by coverage, bundled + R2 fonts, families and weights, stroke, shadow,
 * multi-line layout, a real coverage check). Until then: one font (DejaVu Sans) for every family and weight,
 * one line ("\n" is a space), no stroke or shadow, and no coverage check (undrawable characters come out as
 * the font's missing glyph).
 */

export type TextMarkOptions = {
  /** "\n" starts a new line. */
  text: string;
  /** Font size in px. */
  size: number;
  /** "#RRGGBB" or "#RRGGBBAA"; the colour's alpha multiplies `opacity`. */
  color: string;
  /** 0..1, baked into the returned bitmap's alpha. */
  opacity: number;
  fontFamily: "sans" | "serif" | "mono";
  fontWeight: "regular" | "bold";
  /** Outline around the glyphs; width in px; colour as `color`. */
  stroke?: { color: string; width: number };
  /** Offset copy under the glyphs; dx/dy/blur in px; colour as `color`. */
  shadow?: { color: string; dx: number; dy: number; blur?: number };
  env: { FONTS?: R2Bucket };
};

/** Some characters of the text are covered by no font of the chain. */
export class UndrawableTextError extends Error {
  constructor(readonly characters: string[]) {
    super(`No font can draw ${characters.join(" ")}`);
    this.name = "UndrawableTextError";
  }
}

/**
 * The mark as a straight-alpha RGBA bitmap cropped to the ink bounds (stroke and shadow included), opacity
 * applied; undefined when nothing is drawn (blank text). Throws UndrawableTextError.
 */
export async function renderTextMark(opts: TextMarkOptions): Promise<Rgba | undefined> {
  const hex = opts.color.slice(1);
  const alpha = hex.length === 8 ? Number.parseInt(hex.slice(6), 16) / 255 : 1;
  const image = await renderText({
    text: opts.text,
    size: opts.size,
    color: `#${hex.slice(0, 6)}`,
    opacity: alpha * opts.opacity,
    fonts: [new Uint8Array(FONT)],
  });
  if (image) demultiply(image.data);
  return image;
}

/**
 * resvg's pixels are tiny-skia's premultiplied RGBA (measured: red at opacity 0.5 came out (128, 0, 0, 128));
 * every Rgba in src/images is straight alpha.
 */
function demultiply(d: Uint8ClampedArray): void {
  for (let i = 0; i < d.length; i += 4) {
    const a = d[i + 3]!;
    if (a === 0 || a === 255) continue;
    d[i] = (d[i]! * 255) / a;
    d[i + 1] = (d[i + 1]! * 255) / a;
    d[i + 2] = (d[i + 2]! * 255) / a;
  }
}

/** Marks this file as the callers' stand-in (tests that need the real font chain skip while it is here). */
export const STAND_IN = true;
