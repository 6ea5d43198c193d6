import type { Position } from "@p6/contract/params";
import type { Rgba } from "./rgba";

type Size = { width: number; height: number };

/**
 * Top-left corner of a mark of `mark` size placed at `position`, `margin` px from the named edges (centred on
 * the other axis). A mark larger than the room left is still anchored at its edge and clipped at the other.
 */
export function placeMark(
  position: Position,
  margin: number,
  base: Size,
  mark: Size,
): { x: number; y: number } {
  const along = (start: boolean, end: boolean, room: number, size: number) =>
    start ? margin : end ? room - size - margin : Math.round((room - size) / 2);
  const x = along(position.endsWith("left"), position.endsWith("right"), base.width, mark.width);
  const y = along(position.startsWith("top"), position.startsWith("bottom"), base.height, mark.height);
  return { x, y };
}

/**
 * Blends `mark` over `base` in place ("source over", straight alpha), the mark's alpha scaled by `opacity`.
 * Pixels where the effective alpha is 0 are left exactly as they were.
 */
export function compositeOver(base: Rgba, mark: Rgba, x: number, y: number, opacity: number): void {
  const x0 = Math.max(0, x);
  const y0 = Math.max(0, y);
  const x1 = Math.min(base.width, x + mark.width);
  const y1 = Math.min(base.height, y + mark.height);
  if (opacity <= 0 || x0 >= x1 || y0 >= y1) return;
  const b = base.data;
  const m = mark.data;
  const alphaScale = opacity / 255;
  for (let row = y0; row < y1; row++) {
    let bi = (row * base.width + x0) * 4;
    let mi = ((row - y) * mark.width + (x0 - x)) * 4;
    for (let col = x0; col < x1; col++, bi += 4, mi += 4) {
      const a = m[mi + 3]! * alphaScale;
      if (a !== 0) blendPixel(b, bi, m[mi]!, m[mi + 1]!, m[mi + 2]!, a);
    }
  }
}

/** "Source over" of one colour with alpha `a` (0–1) onto the pixel at byte offset `i`. */
export function blendPixel(
  d: Uint8ClampedArray,
  i: number,
  r: number,
  g: number,
  b: number,
  a: number,
): void {
  const inv = 1 - a;
  const baseAlpha = d[i + 3]!;
  if (baseAlpha === 255) {
    d[i] = r * a + d[i]! * inv;
    d[i + 1] = g * a + d[i + 1]! * inv;
    d[i + 2] = b * a + d[i + 2]! * inv;
    return;
  }
  const under = (baseAlpha / 255) * inv;
  const outAlpha = a + under;
  d[i] = (r * a + d[i]! * under) / outAlpha;
  d[i + 1] = (g * a + d[i + 1]! * under) / outAlpha;
  d[i + 2] = (b * a + d[i + 2]! * under) / outAlpha;
  d[i + 3] = outAlpha * 255;
}

/** Replaces transparency with white, in place (JPEG has no alpha channel). */
export function flattenOnWhite(image: Rgba): void {
  const d = image.data;
  for (let i = 0; i < d.length; i += 4) {
    const alpha = d[i + 3]!;
    if (alpha === 255) continue;
    const a = alpha / 255;
    const white = 255 * (1 - a);
    d[i] = d[i]! * a + white;
    d[i + 1] = d[i + 1]! * a + white;
    d[i + 2] = d[i + 2]! * a + white;
    d[i + 3] = 255;
  }
}
