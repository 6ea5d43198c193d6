import type { Run } from "./layout";

/**
 * The SVGs resvg draws for a text mark. Every run (one font, see layout.ts) is its own `<text>`: first all
 * runs are drawn twice on a measuring canvas to read their advances, then placed in visual order, each line
 * centred. Stroke goes under the fill (`paint-order`), the shadow is `feDropShadow`, and the opacity is on
 * the whole group so overlapping fill, stroke and shadow do not add up.
 */
export type Paint = {
  size: number;
  color: string;
  opacity: number;
  fontWeight: "regular" | "bold";
  stroke?: { color: string; width: number };
  shadow?: { color: string; dx: number; dy: number; blur?: number };
};

const LINE_HEIGHT = 1.5;

function runText(run: Run, x: number, y: number, attributes: string, size = 0): string {
  if (run.emoji) {
    const e = run.emoji;
    return (
      `<image x="${x + e.left * size}" y="${y - e.top * size}" width="${e.width * size}" ` +
      `height="${e.height * size}" preserveAspectRatio="none" xlink:href="${e.href}"/>`
    );
  }
  // An RTL run is embedded (RLE … PDF) so resvg orders it right to left whatever the chunk's base direction.
  const text = run.rtl ? `\u202b${run.text}\u202c` : run.text;
  return (
    `<text x="${x}" y="${y}" font-family="${escapeXml(`'${run.face.family}'`)}" ${attributes} ` +
    `xml:space="preserve">${escapeXml(text)}</text>`
  );
}

function fontAttributes(paint: Paint): string {
  return `font-size="${paint.size}" font-weight="${paint.fontWeight === "bold" ? 700 : 400}"`;
}

/**
 * Each run twice, on its own band: anchored at its start and at its end on the same x. The ink of the second
 * is the first moved left by exactly the run's advance, so the difference of their ink centroids is the
 * advance, to a fraction of a pixel.
 */
export function measureSvg(
  runs: Run[],
  paint: Paint,
): { svg: string; width: number; height: number; band: number; anchor: number } {
  const size = paint.size;
  const band = Math.ceil(size * 2);
  const longest = Math.max(1, ...runs.map((run) => [...run.text].length));
  const anchor = Math.ceil(size * (longest * 1.6 + 1));
  const width = 2 * anchor;
  const height = band * 2 * runs.length;
  const attributes = `${fontAttributes(paint)} fill="#000"`;
  const texts = runs.flatMap((run, i) => [
    runText(run, anchor, band * 2 * i + size * 1.3, `${attributes} text-anchor="start"`),
    runText(run, anchor, band * (2 * i + 1) + size * 1.3, `${attributes} text-anchor="end"`),
  ]);
  return {
    svg: `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${texts.join("")}</svg>`,
    width,
    height,
    band,
    anchor,
  };
}

/** The runs to measure: a run of spaces has no ink, so it is measured as "I" + spaces + "I" less "II". */
export function probes(runs: Run[]): Run[] {
  return runs.flatMap((run) =>
    run.space
      ? [
          { ...run, text: `I${run.text}I` },
          { ...run, text: "II" },
        ]
      : [run],
  );
}

/** The advance of each of `count` probes from their measuring render (RGBA rows of `width` pixels). */
export function probeAdvances(pixels: Uint8Array, width: number, band: number, count: number): number[] {
  const centroid = (top: number): number => {
    let sum = 0;
    let weight = 0;
    for (let y = top; y < top + band; y++)
      for (let x = 0; x < width; x++) {
        const alpha = pixels[(y * width + x) * 4 + 3]!;
        sum += alpha * x;
        weight += alpha;
      }
    return weight > 0 ? sum / weight : 0;
  };
  return Array.from({ length: count }, (_, i) => centroid(band * 2 * i) - centroid(band * (2 * i + 1)));
}

/** How far right of its origin each probe's ink reaches (alpha ≥ ½), from the same measuring render. */
export function inkRights(
  pixels: Uint8Array,
  width: number,
  band: number,
  count: number,
  anchor: number,
): number[] {
  return Array.from({ length: count }, (_, i) => {
    let right = anchor;
    for (let y = band * 2 * i; y < band * (2 * i + 1); y++)
      for (let x = right + 1; x < width; x++) if (pixels[(y * width + x) * 4 + 3]! >= 128) right = x;
    return right - anchor;
  });
}

/** Run advances from the advances of `probes(runs)`, in order. */
export function advancesFrom(probed: number[], runs: Run[]): number[] {
  let probe = 0;
  return runs.map((run) => (run.space ? probed[probe++]! - probed[probe++]! : probed[probe++]!));
}

/** The mark: lines of runs in visual order with their advances, centred on a canvas with room for effects. */
export function markSvg(
  lines: { runs: Run[]; advances: number[] }[],
  paint: Paint,
): { svg: string; width: number; height: number } {
  const { size, stroke, shadow } = paint;
  const strokeWidth = stroke && stroke.width > 0 ? stroke.width : 0;
  const blur = shadow?.blur ?? 0;
  const pad = Math.ceil(
    size + strokeWidth + (shadow ? Math.abs(shadow.dx) + Math.abs(shadow.dy) + 3 * blur : 0),
  );
  const widths = lines.map((line) => line.advances.reduce((a, b) => a + b, 0));
  const width = Math.ceil(2 * pad + Math.max(0, ...widths));
  const height = Math.ceil(2 * pad + size * lines.length * LINE_HEIGHT);
  let attributes = `${fontAttributes(paint)} fill="${escapeXml(paint.color)}"`;
  if (stroke && strokeWidth > 0)
    // The stroke straddles the outline and the fill covers its inner half: twice the width shows `width`.
    attributes +=
      ` stroke="${escapeXml(stroke.color)}" stroke-width="${2 * strokeWidth}"` +
      ' stroke-linejoin="round" paint-order="stroke"';

  const texts = lines.flatMap((line, i) => {
    const baseline = pad + size * (1.1 + i * LINE_HEIGHT);
    let x = (width - widths[i]!) / 2;
    return line.runs.map((run, j) => {
      const text = run.space ? "" : runText(run, x, baseline, attributes, size);
      x += line.advances[j]!;
      return text;
    });
  });

  let defs = "";
  let filter = "";
  if (shadow) {
    defs =
      `<defs><filter id="shadow" filterUnits="userSpaceOnUse" x="0" y="0" width="${width}" height="${height}">` +
      `<feDropShadow dx="${shadow.dx}" dy="${shadow.dy}" stdDeviation="${blur / 2}" ` +
      `flood-color="${escapeXml(shadow.color)}"/></filter></defs>`;
    filter = ' filter="url(#shadow)"';
  }
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" ` +
    `width="${width}" height="${height}">${defs}` +
    `<g opacity="${paint.opacity}"${filter}>${texts.join("")}</g></svg>`;
  return { svg, width, height };
}

function escapeXml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
