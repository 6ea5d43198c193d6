import FONT from "../../assets/fonts/DejaVuSans.ttf";
import { blendPixel } from "./composite";
import { CoverageCanvas } from "./font/raster";
import { TrueTypeFont } from "./font/truetype";
import type { Rgba } from "./rgba";

/**
 * Text marks drawn with the bundled DejaVu Sans: laid out with advance widths and pair kerning, one line per
 * "\n", lines aligned like the mark's position (left, centred or right), then filled anti-aliased.
 */

let font: TrueTypeFont | undefined;
const getFont = () => (font ??= new TrueTypeFont(FONT));

export type TextAlign = "left" | "center" | "right";
type PlacedGlyph = { glyph: number; x: number };
export type TextLayout = {
  /** Size of the whole mark, padding included. */
  width: number;
  height: number;
  scale: number;
  /** Room left around the glyphs on every side. */
  pad: number;
  lines: { baseline: number; glyphs: PlacedGlyph[] }[];
};

/** Color "#RRGGBB" or "#RRGGBBAA" → [r, g, b, a], each 0–255. */
export function parseColor(color: string): [number, number, number, number] {
  const hex = color.slice(1);
  const channel = (i: number) => Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return [channel(0), channel(1), channel(2), hex.length === 8 ? channel(3) : 255];
}

export function layoutText(text: string, fontSize: number, align: TextAlign): TextLayout {
  const f = getFont();
  const scale = fontSize / f.unitsPerEm;
  // Glyphs may reach a little past their advance and the line's ascent/descent (accents, "j", "f").
  const pad = Math.ceil(fontSize * 0.1) + 1;
  const lineHeight = (f.ascender - f.descender + f.lineGap) * scale;
  const measured = text.split(/\r?\n/).map((line) => {
    const glyphs: PlacedGlyph[] = [];
    let x = 0;
    let previous = -1;
    for (const char of line.replaceAll("\t", " ")) {
      const glyph = f.glyphIndex(char.codePointAt(0)!);
      if (previous >= 0) x += f.kerning(previous, glyph) * scale;
      glyphs.push({ glyph, x });
      x += f.advanceWidth(glyph) * scale;
      previous = glyph;
    }
    return { glyphs, width: x };
  });
  const textWidth = Math.max(...measured.map((line) => line.width));
  const lines = measured.map((line, i) => {
    const offset = align === "left" ? 0 : (textWidth - line.width) / (align === "center" ? 2 : 1);
    return {
      baseline: pad + f.ascender * scale + i * lineHeight,
      glyphs: line.glyphs.map((g) => ({ glyph: g.glyph, x: pad + offset + g.x })),
    };
  });
  const height = Math.ceil((f.ascender - f.descender) * scale + (lines.length - 1) * lineHeight) + 2 * pad;
  return { width: Math.ceil(textWidth) + 2 * pad, height, scale, pad, lines };
}

/** Rows rasterized at a time: bounds the coverage buffer whatever the font size. */
const BAND_ROWS = 128;

/**
 * Paints the layout onto `image` with its top-left corner at (x, y), in `color` (its alpha multiplied by
 * `opacity`), blending each pixel by its coverage. Only the part of the text box on the image is rasterized,
 * in bands of rows, so even a huge font costs a few hundred KB, not a copy of the image.
 */
export function paintText(
  image: Rgba,
  layout: TextLayout,
  color: [number, number, number, number],
  x: number,
  y: number,
  opacity: number,
): void {
  const left = Math.max(0, x);
  const top = Math.max(0, y);
  const width = Math.min(image.width, x + layout.width) - left;
  const height = Math.min(image.height, y + layout.height) - top;
  const alpha = (color[3] / 255) * opacity;
  if (width <= 0 || height <= 0 || alpha <= 0) return;
  const f = getFont();
  const { scale } = layout;
  const ascent = f.ascender * scale + layout.pad;
  const descent = -f.descender * scale + layout.pad;
  const canvas = new CoverageCanvas(width, Math.min(BAND_ROWS, height));
  const coverage = new Float32Array(width);
  for (let band = top; band < top + height; band += BAND_ROWS) {
    const rows = Math.min(BAND_ROWS, top + height - band);
    canvas.clear();
    // Layout coordinates → canvas coordinates: the canvas's (0, 0) is the image pixel (left, band).
    const dx = x - left;
    const dy = y - band;
    for (const line of layout.lines) {
      if (line.baseline + dy + descent < 0 || line.baseline + dy - ascent > rows) continue;
      for (const glyph of line.glyphs) {
        for (const contour of f.outline(glyph.glyph)) {
          drawContour(
            canvas,
            contour.map((p) => ({
              x: dx + glyph.x + p.x * scale,
              y: dy + line.baseline - p.y * scale,
              onCurve: p.onCurve,
            })),
          );
        }
      }
    }
    const [r, g, b] = color;
    for (let row = 0; row < rows; row++) {
      canvas.rowCoverage(row, coverage);
      let i = ((band + row) * image.width + left) * 4;
      for (let col = 0; col < width; col++, i += 4) {
        const c = coverage[col]!;
        if (c !== 0) blendPixel(image.data, i, r, g, b, c * alpha);
      }
    }
  }
}

type Point = { x: number; y: number; onCurve: boolean };

/**
 * A TrueType contour: on-curve points joined by lines, off-curve points are quadratic controls, and two
 * off-curve points in a row imply an on-curve point halfway between them.
 */
function drawContour(canvas: CoverageCanvas, points: Point[]): void {
  const n = points.length;
  const midpoint = (a: Point, b: Point): Point => ({ x: (a.x + b.x) / 2, y: (a.y + b.y) / 2, onCurve: true });
  const firstOn = points.findIndex((p) => p.onCurve);
  // Walk from an on-curve point (implied, if the contour has none) all the way round back to it.
  const start = firstOn >= 0 ? points[firstOn]! : midpoint(points[n - 1]!, points[0]!);
  const rest = firstOn >= 0 ? [...points.slice(firstOn + 1), ...points.slice(0, firstOn)] : points;
  let current = start;
  let control: Point | undefined;
  for (const p of [...rest, start]) {
    if (p.onCurve) {
      if (control) canvas.quad(current.x, current.y, control.x, control.y, p.x, p.y);
      else canvas.line(current.x, current.y, p.x, p.y);
      current = p;
      control = undefined;
    } else if (control) {
      const mid = midpoint(control, p);
      canvas.quad(current.x, current.y, control.x, control.y, mid.x, mid.y);
      current = mid;
      control = p;
    } else {
      control = p;
    }
  }
}
