/**
 * A JPEG's frame header (its start-of-frame marker names the coding process) and the codings our decoders
 * cannot read: jSquash's mozjpeg in the Worker is built without arithmetic decoding and for 8-bit samples
 * only, and ffmpeg's mjpeg decoder reads neither arithmetic nor hierarchical JPEGs. Browsers show them, so
 * the refusal names the coding instead of calling the file broken. Pure: the Worker uses it too.
 */
import { isStartOfFrame, jpegSegments } from "./image-header.ts";

export interface JpegFrame {
  marker: number;
  precision: number;
  width: number;
  height: number;
  components: number;
}

/** The first frame header, walking the marker segments before the first scan; null when there is none. */
export function jpegFrame(b: Uint8Array): JpegFrame | null {
  for (const { marker, offset: o } of jpegSegments(b)) {
    if (marker === 0xda) return null;
    if (isStartOfFrame(marker)) {
      if (o + 10 > b.length) return null;
      const u16 = (at: number) => (b[at]! << 8) | b[at + 1]!;
      return { marker, precision: b[o + 4]!, height: u16(o + 5), width: u16(o + 7), components: b[o + 9]! };
    }
  }
  return null;
}

/** "an arithmetic-coded JPEG" and the like when the frame's coding cannot be decoded here, else null. */
export function unsupportedJpegCoding({ marker, precision }: JpegFrame): string | null {
  if (marker === 0xc3 || marker === 0xc7 || marker === 0xcb || marker === 0xcf) return "a lossless JPEG";
  if (marker >= 0xc9) return "an arithmetic-coded JPEG";
  if (marker === 0xc5 || marker === 0xc6) return "a hierarchical JPEG";
  if (precision !== 8) return `a ${precision}-bit JPEG`;
  return null;
}
