import { initWasm, Resvg } from "@resvg/resvg-wasm";
import RESVG_WASM from "@resvg/resvg-wasm/index_bg.wasm?module";
import type { Rgba } from "../images/rgba";

let ready: Promise<void> | undefined;

/** resvg's WASM, instantiated once per isolate. */
export function resvgReady(): Promise<void> {
  ready ??= initWasm(RESVG_WASM);
  return ready;
}

/** Beyond this the canvas alone would take a third of an isolate's memory: refuse rather than crash. */
const MAX_CANVAS_PIXELS = 10_000_000;

/** Draws the SVG with exactly these fonts: resvg's RGBA (premultiplied alpha), the SVG's size. */
export async function renderSvg(
  svg: string,
  width: number,
  height: number,
  fonts: Uint8Array[],
): Promise<{ pixels: Uint8Array; width: number; height: number }> {
  if (width * height > MAX_CANVAS_PIXELS)
    throw new RangeError(`a ${width}×${height} canvas is too large for a text mark`);
  await resvgReady();
  const resvg = new Resvg(svg, { font: { fontBuffers: fonts } });
  try {
    const rendered = resvg.render();
    try {
      return { pixels: rendered.pixels, width: rendered.width, height: rendered.height };
    } finally {
      rendered.free();
    }
  } finally {
    resvg.free();
  }
}

/**
 * Draws the SVG and crops the result to its ink (alpha > 0), so the bounds include stroke and shadow.
 * `clipped` says the ink reached the canvas edge.
 */
export async function rasterise(
  svg: string,
  width: number,
  height: number,
  fonts: Uint8Array[],
): Promise<{ image: Rgba | undefined; clipped: boolean }> {
  const rendered = await renderSvg(svg, width, height, fonts);
  return cropToInk(rendered.pixels, rendered.width, rendered.height);
}

function cropToInk(
  pixels: Uint8Array,
  width: number,
  height: number,
): { image: Rgba | undefined; clipped: boolean } {
  let left = width;
  let right = -1;
  let top = height;
  let bottom = -1;
  for (let y = 0; y < height; y++) {
    const row = y * width * 4;
    for (let x = 0; x < width; x++) {
      if (pixels[row + x * 4 + 3] === 0) continue;
      if (x < left) left = x;
      if (x > right) right = x;
      if (y < top) top = y;
      bottom = y;
    }
  }
  if (right < 0) return { image: undefined, clipped: false };
  const clipped = left === 0 || top === 0 || right === width - 1 || bottom === height - 1;
  const w = right - left + 1;
  const h = bottom - top + 1;
  const data = new Uint8ClampedArray(w * h * 4);
  for (let y = 0; y < h; y++) {
    const from = ((top + y) * width + left) * 4;
    data.set(pixels.subarray(from, from + w * 4), y * w * 4);
  }
  // resvg (tiny-skia) gives premultiplied pixels; an Rgba is straight alpha.
  for (let i = 0; i < data.length; i += 4) {
    const a = data[i + 3]!;
    if (a === 0 || a === 255) continue;
    data[i] = Math.round((data[i]! * 255) / a);
    data[i + 1] = Math.round((data[i + 1]! * 255) / a);
    data[i + 2] = Math.round((data[i + 2]! * 255) / a);
  }
  return { image: { data, width: w, height: h }, clipped };
}
