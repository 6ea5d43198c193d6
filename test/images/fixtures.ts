import PNG_WASM from "@jsquash/png/codec/pkg/squoosh_png_bg.wasm?module";
import encodeJsquashPng, { init as initPngEncoder } from "@jsquash/png/encode";
import WEBP_ENC_WASM from "@jsquash/webp/codec/enc/webp_enc_simd.wasm";
import encodeJsquashWebp, { init as initWebpEncoder } from "@jsquash/webp/encode";
import { decodeImage, encodeImage } from "../../src/images/codecs";
import { type ImageFormat, readImageHeader } from "../../src/images/header";
import type { Rgba } from "../../src/images/rgba";

/**
 * Synthetic test images, made in the test run: RGBA built in code, encoded with jSquash's own encoders (PNG with
 * jSquash's Rust codec, so our TypeScript PNG decoder is checked against another implementation).
 */

let ready: Promise<unknown> | undefined;
const initEncoders = () =>
  (ready ??= Promise.all([initPngEncoder(PNG_WASM), initWebpEncoder(WEBP_ENC_WASM)]));

/** A smooth opaque gradient: every pixel differs from a flat colour, compresses well, survives JPEG. */
export function gradient(width: number, height: number): Rgba {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      data[i] = 40 + (160 * x) / width;
      data[i + 1] = 40 + (160 * y) / height;
      data[i + 2] = 120;
      data[i + 3] = 255;
    }
  }
  return { data, width, height };
}

/** A logo: the left half opaque magenta, the right half fully transparent. */
export function halfTransparentLogo(width: number, height: number): Rgba {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width / 2; x++) data.set([255, 0, 255, 255], (y * width + x) * 4);
  }
  return { data, width, height };
}

/** A fully opaque logo in one flat colour. */
export function solidLogo(width: number, height: number, rgba = [255, 0, 255, 255]): Rgba {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < data.length; i += 4) data.set(rgba, i);
  return { data, width, height };
}

export type FixtureFormat = ImageFormat | "webp-lossless" | "webp-alpha";

/** Encodes RGBA as a file; the WebP variants give the three WebP layouts (VP8, VP8L, VP8X with alpha). */
export async function encodeFixture(image: Rgba, format: FixtureFormat): Promise<Uint8Array> {
  await initEncoders();
  const imageData = image as unknown as Parameters<typeof encodeJsquashPng>[0];
  if (format === "png") return new Uint8Array(await encodeJsquashPng(imageData));
  if (format === "webp-lossless") return new Uint8Array(await encodeJsquashWebp(imageData, { lossless: 1 }));
  if (format === "webp-alpha") {
    // One translucent pixel is enough to make the encoder write an ALPH chunk, hence the VP8X layout.
    const translucent = { ...image, data: image.data.slice() };
    translucent.data[3] = 128;
    return new Uint8Array(
      await encodeJsquashWebp(translucent as unknown as Parameters<typeof encodeJsquashWebp>[0], {
        quality: 90,
      }),
    );
  }
  return encodeImage(image, format, 95);
}

/** Decodes an output file, checking its header agrees. */
export async function decodeOutput(bytes: Uint8Array): Promise<Rgba> {
  const header = readImageHeader(bytes);
  if (!header) throw new Error("output is not an image");
  return decodeImage(header.format, bytes);
}

/** Bounding box of the pixels whose RGB differs by more than `threshold` (max over channels). */
export function changedBox(a: Rgba, b: Rgba, threshold = 0) {
  let minX = Number.POSITIVE_INFINITY;
  let minY = Number.POSITIVE_INFINITY;
  let maxX = -1;
  let maxY = -1;
  let count = 0;
  for (let y = 0; y < a.height; y++) {
    for (let x = 0; x < a.width; x++) {
      const i = (y * a.width + x) * 4;
      const d = Math.max(
        Math.abs(a.data[i]! - b.data[i]!),
        Math.abs(a.data[i + 1]! - b.data[i + 1]!),
        Math.abs(a.data[i + 2]! - b.data[i + 2]!),
        Math.abs(a.data[i + 3]! - b.data[i + 3]!),
      );
      if (d <= threshold) continue;
      count++;
      minX = Math.min(minX, x);
      minY = Math.min(minY, y);
      maxX = Math.max(maxX, x);
      maxY = Math.max(maxY, y);
    }
  }
  return count === 0 ? null : { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1, count };
}

/** Mean absolute RGB difference inside a rectangle. */
export function meanDiff(
  a: Rgba,
  b: Rgba,
  r: { x: number; y: number; width: number; height: number },
): number {
  let sum = 0;
  for (let y = r.y; y < r.y + r.height; y++) {
    for (let x = r.x; x < r.x + r.width; x++) {
      const i = (y * a.width + x) * 4;
      for (let c = 0; c < 3; c++) sum += Math.abs(a.data[i + c]! - b.data[i + c]!);
    }
  }
  return sum / (r.width * r.height * 3);
}
