import type { Rgba } from "../images/rgba";
import { rasterise } from "./resvg";

/**
 * Text → RGBA with caller-chosen fonts: the measurement harness of docs/text-rendering.md. Watermarks use
 * `renderTextMark` (mark.ts), which picks the fonts itself.
 */

export type TextMark = {
  text: string;
  /** Font size in pixels. */
  size: number;
  /** CSS colour, e.g. "#ffffff" or "rgb(255 0 0)". */
  color: string;
  /** 0..1 */
  opacity: number;
  /** Raw font files (TTF/OTF/TTC), tried in order for each character: the fallback chain. */
  fonts: Uint8Array[];
};

/** The shaped text, cropped to its ink bounds; undefined when nothing is drawn (blank text). */
export async function renderText(mark: TextMark): Promise<Rgba | undefined> {
  const width = Math.ceil(mark.size * (mark.text.length + 2) * 1.5);
  const height = Math.ceil(mark.size * 2);
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<text x="${mark.size / 2}" y="${mark.size * 1.4}" font-size="${mark.size}" fill="${escapeXml(mark.color)}" ` +
    `fill-opacity="${mark.opacity}" xml:space="preserve">${escapeXml(mark.text)}</text></svg>`;
  return (await rasterise(svg, width, height, mark.fonts)).image;
}

function escapeXml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
