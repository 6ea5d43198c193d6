import type { Rgba } from "../../src/images/rgba";

/**
 * Perceptual comparison of two text renderings by different stacks: each image's alpha is cropped to its
 * ink, binarised (alpha ≥ 50 %), and area-averaged onto the same small grid (height `rows`, width from the
 * reference's aspect ratio), blurred by one cell, then compared by normalised cross-correlation (Pearson's
 * r, 1 = same shape).
 * Binarising and the coarse grid absorb anti-aliasing, hinting and sub-pixel differences; glyph shapes,
 * order, joining and missing glyphs (boxes) still change the grid.
 */
export function inkSimilarity(image: Rgba, reference: Rgba, rows = 16): number {
  const a = inkBox(image);
  const b = inkBox(reference);
  if (!a || !b) return 0;
  const columns = Math.max(4, Math.round((rows * b.width) / b.height));
  const x = blur(grid(image, a, columns, rows), columns, rows);
  const y = blur(grid(reference, b, columns, rows), columns, rows);
  return correlation(x, y);
}

type Box = { left: number; top: number; width: number; height: number };

function inkBox(image: Rgba): Box | undefined {
  let left = image.width;
  let right = -1;
  let top = image.height;
  let bottom = -1;
  for (let y = 0; y < image.height; y++)
    for (let x = 0; x < image.width; x++)
      if (image.data[(y * image.width + x) * 4 + 3]! >= 128) {
        left = Math.min(left, x);
        right = Math.max(right, x);
        top = Math.min(top, y);
        bottom = y;
      }
  return right < 0 ? undefined : { left, top, width: right - left + 1, height: bottom - top + 1 };
}

function grid(image: Rgba, box: Box, columns: number, rows: number): Float64Array {
  const sum = new Float64Array(columns * rows);
  const count = new Float64Array(columns * rows);
  for (let y = 0; y < box.height; y++)
    for (let x = 0; x < box.width; x++) {
      const cell = Math.floor((y * rows) / box.height) * columns + Math.floor((x * columns) / box.width);
      const alpha = image.data[((box.top + y) * image.width + box.left + x) * 4 + 3]!;
      sum[cell]! += alpha >= 128 ? 1 : 0;
      count[cell]! += 1;
    }
  return sum.map((s, i) => (count[i]! > 0 ? s / count[i]! : 0));
}

/** A 3×3 box blur: a stroke one cell off still overlaps (spacing differs a little between shapers). */
function blur(cells: Float64Array, columns: number, rows: number): Float64Array {
  const out = new Float64Array(cells.length);
  for (let y = 0; y < rows; y++)
    for (let x = 0; x < columns; x++) {
      let sum = 0;
      let n = 0;
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const yy = y + dy;
          const xx = x + dx;
          if (yy < 0 || yy >= rows || xx < 0 || xx >= columns) continue;
          sum += cells[yy * columns + xx]!;
          n++;
        }
      out[y * columns + x] = sum / n;
    }
  return out;
}

function correlation(x: Float64Array, y: Float64Array): number {
  const n = x.length;
  const mean = (v: Float64Array) => v.reduce((a, b) => a + b, 0) / n;
  const mx = mean(x);
  const my = mean(y);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i]! - mx) * (y[i]! - my);
    sxx += (x[i]! - mx) ** 2;
    syy += (y[i]! - my) ** 2;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : 0;
}

/**
 * Colour comparison for emoji: both images cropped to their ink and area-averaged onto a `cells`×`cells` grid
 * of colours (alpha-weighted), then Pearson's r over every cell's R, G and B. Shapes and colours must agree;
 * a black-and-white or wrong picture scores low.
 */
export function colourSimilarity(image: Rgba, reference: Rgba, cells = 12): number {
  const a = inkBox(image);
  const b = inkBox(reference);
  if (!a || !b) return 0;
  return correlation(colourGrid(image, a, cells), colourGrid(reference, b, cells));
}

function colourGrid(image: Rgba, box: Box, cells: number): Float64Array {
  const out = new Float64Array(cells * cells * 3);
  const weight = new Float64Array(cells * cells);
  for (let y = 0; y < box.height; y++)
    for (let x = 0; x < box.width; x++) {
      const i = ((box.top + y) * image.width + box.left + x) * 4;
      const alpha = image.data[i + 3]! / 255;
      const cell = Math.floor((y * cells) / box.height) * cells + Math.floor((x * cells) / box.width);
      for (let c = 0; c < 3; c++) out[cell * 3 + c]! += image.data[i + c]! * alpha;
      weight[cell]! += 1;
    }
  for (let cell = 0; cell < cells * cells; cell++)
    for (let c = 0; c < 3; c++) out[cell * 3 + c] = out[cell * 3 + c]! / Math.max(1, weight[cell]!);
  return out;
}

/** Share of ink pixels (alpha ≥ 50 %) whose colour is saturated: max − min of R, G, B over 80. */
export function saturatedShare(image: Rgba): number {
  let ink = 0;
  let saturated = 0;
  for (let i = 0; i < image.data.length; i += 4) {
    if (image.data[i + 3]! < 128) continue;
    ink++;
    const r = image.data[i]!;
    const g = image.data[i + 1]!;
    const b = image.data[i + 2]!;
    if (Math.max(r, g, b) - Math.min(r, g, b) > 80) saturated++;
  }
  return ink === 0 ? 0 : saturated / ink;
}
