/**
 * Writers of the metadata our image tests need, on files made by the tests: EXIF orientation in a JPEG (APP1), a
 * PNG (eXIf) or a WebP (EXIF chunk, VP8X layout), and extra PNG chunks (acTL makes an APNG). Shared by the
 * Worker's image tests and the engine's (pure: imports only the engine's pure icc.ts).
 */
import { pngChunk } from "@p6/contract/icc";

/** A TIFF header whose IFD0 holds one entry, Orientation = `orientation`, in either byte order. */
export function tiffWithOrientation(orientation: number, order: "II" | "MM" = "MM"): Uint8Array {
  const le = order === "II";
  const u16 = (v: number) => (le ? [v & 0xff, v >> 8] : [v >> 8, v & 0xff]);
  const u32 = (v: number) => (le ? [v & 0xff, 0, 0, 0] : [0, 0, 0, v & 0xff]);
  return Uint8Array.from([
    ...[order.charCodeAt(0), order.charCodeAt(1)],
    ...u16(42),
    ...u32(8), // IFD0 right after the header
    ...u16(1), // one entry
    ...[...u16(0x0112), ...u16(3), ...u32(1), ...u16(orientation), 0, 0], // Orientation, SHORT, 1 value
    ...[0, 0, 0, 0], // no next IFD
  ]);
}

/** The JPEG with an EXIF APP1 segment (`Exif\0\0` and the TIFF) inserted after the SOI marker. */
export function withExifOrientation(
  jpeg: Uint8Array,
  orientation: number,
  order: "II" | "MM" = "MM",
): Uint8Array {
  const payload = [0x45, 0x78, 0x69, 0x66, 0, 0, ...tiffWithOrientation(orientation, order)]; // "Exif\0\0"
  const length = payload.length + 2;
  const segment = [0xff, 0xe1, length >> 8, length & 0xff, ...payload];
  const out = new Uint8Array(jpeg.length + segment.length);
  out.set(jpeg.subarray(0, 2));
  out.set(segment, 2);
  out.set(jpeg.subarray(2), 2 + segment.length);
  return out;
}

/** The PNG with a chunk (`type`, `data`, a correct CRC) inserted right after IHDR. */
export function withPngChunk(png: Uint8Array, type: string, data: Uint8Array): Uint8Array {
  const chunk = pngChunk(type, data);
  const ihdrEnd = 8 + 12 + 13;
  const out = new Uint8Array(png.length + chunk.length);
  out.set(png.subarray(0, ihdrEnd));
  out.set(chunk, ihdrEnd);
  out.set(png.subarray(ihdrEnd), ihdrEnd + chunk.length);
  return out;
}

/** An acTL chunk's data: `frames` frames, played forever. */
export const acTL = (frames: number) => Uint8Array.of(0, 0, 0, frames, 0, 0, 0, 0);

/**
 * The WebP (any layout) rewrapped as VP8X with an EXIF chunk (a bare TIFF) after its image chunks, as the
 * container spec orders them. `width`/`height` are the canvas's; `alpha` sets the VP8X alpha flag (pass true
 * when the image chunks include ALPH or a VP8L with alpha).
 */
export function withWebpExif(
  webp: Uint8Array,
  width: number,
  height: number,
  tiff: Uint8Array,
  alpha = false,
) {
  const le32 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >>> 24) & 0xff];
  const le24 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff];
  const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));
  let images = webp.subarray(12); // every chunk after "RIFF", size, "WEBP"
  if (String.fromCharCode(...images.subarray(0, 4)) === "VP8X") images = images.subarray(18);
  const vp8x = [...ascii("VP8X"), ...le32(10), 0x08 | (alpha ? 0x10 : 0), 0, 0, 0];
  const exifPad = tiff.length & 1 ? [0] : [];
  const body = [
    ...ascii("WEBP"),
    ...vp8x,
    ...le24(width - 1),
    ...le24(height - 1),
    ...images,
    ...ascii("EXIF"),
    ...le32(tiff.length),
    ...tiff,
    ...exifPad,
  ];
  return Uint8Array.from([...ascii("RIFF"), ...le32(body.length), ...body]);
}
