/**
 * A JPEG's frame header (its start-of-frame marker names the coding process) and the codings our decoders
 * cannot read: jSquash's mozjpeg in the Worker is built without arithmetic decoding and for 8-bit samples
 * only, and ffmpeg's mjpeg decoder reads neither arithmetic nor hierarchical JPEGs. Browsers show them, so
 * the refusal names the coding instead of calling the file broken. Pure: the Worker uses it too.
 */

export interface JpegFrame {
  marker: number;
  precision: number;
  width: number;
  height: number;
  components: number;
}

/** The first frame header, walking the marker segments before the first scan; null when there is none. */
export function jpegFrame(b: Uint8Array): JpegFrame | null {
  if (b[0] !== 0xff || b[1] !== 0xd8) return null;
  const u16 = (o: number) => (b[o]! << 8) | b[o + 1]!;
  for (let o = 2; o + 4 <= b.length && b[o] === 0xff; ) {
    const marker = b[o + 1]!;
    if (marker === 0xff || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      o += marker === 0xff ? 1 : 2; // fill byte; markers without a length
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return null;
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC)
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (o + 10 > b.length) return null;
      return { marker, precision: b[o + 4]!, height: u16(o + 5), width: u16(o + 7), components: b[o + 9]! };
    }
    o += 2 + u16(o + 2);
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
