/**
 * EXIF orientation (tag 0x0112): cameras store the sensor's pixels and say in EXIF how to turn them, in a
 * JPEG's APP1, a PNG's eXIf chunk or a WebP's EXIF chunk. It is applied for all three (decisions.md, "Images"):
 * our encoders write no EXIF, so the pixels are turned before the mark is drawn (the mark lands where the
 * client asked, on the image as it is meant to be seen) and the output needs no tag.
 */
import { exifOrientation as readExifOrientation, shownSize, swapsAxes } from "@p6/contract/sniff";
import type { Rgba } from "./rgba";

/** 1 (as stored) … 8, as TIFF/EXIF number them. */
export type Orientation = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

/** The size of an image as shown (the engine's, shared like the reader below). */
export { shownSize };

/**
 * The orientation in an APP1 segment's payload (`Exif\0\0`, then a TIFF header and IFD0), or 1 when the
 * payload is not EXIF, carries no orientation, or is malformed. The engine's reader, shared (it is pure).
 */
export const exifOrientation = (payload: Uint8Array): Orientation =>
  readExifOrientation(payload) as Orientation;

/**
 * The image as it is meant to be seen. 2–4 flip or turn it half way in place; 5–8 need a new buffer of the
 * same size with width and height swapped.
 */
export function applyOrientation(image: Rgba, o: Orientation): Rgba {
  if (o === 1) return image;
  const { width: w, height: h, data } = image;
  const src = new Uint32Array(data.buffer, data.byteOffset, w * h);
  if (!swapsAxes(o)) {
    // 2: mirror left-right; 3: turn 180°; 4: mirror top-bottom. Swap pixel pairs.
    const at = (x: number, y: number) =>
      o === 2 ? y * w + (w - 1 - x) : o === 3 ? (h - 1 - y) * w + (w - 1 - x) : (h - 1 - y) * w + x;
    const total = w * h;
    for (let i = 0; i < total; i++) {
      const j = at(i % w, Math.floor(i / w));
      if (j > i) {
        const v = src[i]!;
        src[i] = src[j]!;
        src[j] = v;
      }
    }
    return image;
  }
  // The output is h wide and w high; its (x, y) is the stored image's (sx, sy).
  const out = new Uint8ClampedArray(data.length);
  const dst = new Uint32Array(out.buffer);
  const xFromY = o === 5 || o === 6; // 5: transpose, 6: turn 90° clockwise
  const yFromX = o === 5 || o === 8; // 8: turn 90° counter-clockwise; 7: transverse
  for (let y = 0; y < w; y++) {
    const sx = xFromY ? y : w - 1 - y;
    for (let x = 0; x < h; x++) {
      const sy = yFromX ? x : h - 1 - x;
      dst[y * h + x] = src[sy * w + sx]!;
    }
  }
  return { data: out, width: h, height: w };
}
