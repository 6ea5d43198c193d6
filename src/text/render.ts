import { initWasm, Resvg } from "@resvg/resvg-wasm";
import RESVG_WASM from "@resvg/resvg-wasm/index_bg.wasm?module";
import type { Rgba } from "../images/rgba";

/**
 * Text → RGBA through resvg (rustybuzz shaping, Unicode bidi, per-run font fallback over `fonts` in order).
 * See docs/text-rendering.md for why resvg and what is still missing (colour emoji). Not yet used by the
 * watermark operations (issue 17).
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

let ready: Promise<void> | undefined;

/** The shaped text, cropped to its ink bounds; undefined when nothing is drawn (blank text). */
export async function renderText(mark: TextMark): Promise<Rgba | undefined> {
  ready ??= initWasm(RESVG_WASM);
  await ready;
  const width = Math.ceil(mark.size * (mark.text.length + 2) * 1.5);
  const height = Math.ceil(mark.size * 2);
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<text x="${mark.size / 2}" y="${mark.size * 1.4}" font-size="${mark.size}" fill="${escapeXml(mark.color)}" ` +
    `fill-opacity="${mark.opacity}" xml:space="preserve">${escapeXml(mark.text)}</text></svg>`;
  const resvg = new Resvg(svg, { font: { fontBuffers: mark.fonts } });
  try {
    const bounds = resvg.innerBBox();
    if (!bounds || bounds.width <= 0 || bounds.height <= 0) return undefined;
    resvg.cropByBBox(bounds);
    const image = resvg.render();
    try {
      return { data: new Uint8ClampedArray(image.pixels), width: image.width, height: image.height };
    } finally {
      image.free();
    }
  } finally {
    resvg.free();
  }
}

function escapeXml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
