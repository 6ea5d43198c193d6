/**
 * The one image-header reader (decisions.md §9, "Media sniffing"): format, size, EXIF orientation,
 * transparency and animation of a PNG, JPEG or WebP from its first bytes, without decoding, so that limits
 * are checked before any work starts. The Worker (src/images) reads the bytes it holds; the engine reads a
 * downloading source by growing prefixes (readImageHeaderFrom). Also the one walk over a JPEG's marker
 * segments (jpegSegments) that every JPEG reader here uses. Pure: the Worker bundles it.
 */

export type ImageFormat = "png" | "jpeg" | "webp";

/** What an image's header says. */
export interface ImageHeader {
  format: ImageFormat;
  /** As stored; shown turned by `orientation` (EXIF tag 0x0112, 1–8: JPEG APP1, PNG eXIf, WebP EXIF). */
  width: number;
  height: number;
  orientation: number;
  /** The image carries transparency (PNG alpha colour type or tRNS, WebP alpha flag). */
  alpha: boolean;
  /** APNG or animated WebP (not supported). */
  animated: boolean;
}

const ascii = (b: Uint8Array, offset: number, length: number): string =>
  String.fromCharCode(...b.subarray(offset, offset + length));
const u16be = (b: Uint8Array, o: number) => (b[o]! << 8) | b[o + 1]!;
const u32be = (b: Uint8Array, o: number) =>
  ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
const u32le = (b: Uint8Array, o: number) =>
  (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
const u24le = (b: Uint8Array, o: number) => b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16);

/** Orientations 5–8 turn the image a quarter: width and height swap. */
export const swapsAxes = (orientation: number): boolean => orientation >= 5;

/** Width and height of an image as it is shown, turned by its orientation. */
export function shownSize(image: { width: number; height: number; orientation: number }): {
  width: number;
  height: number;
} {
  const { width, height } = image;
  return swapsAxes(image.orientation) ? { width: height, height: width } : { width, height };
}

/**
 * The orientation in a JPEG APP1 payload (`Exif\0\0`, a TIFF header, IFD0's tag 0x0112), 1 when absent or
 * malformed.
 */
export function exifOrientation(p: Uint8Array): number {
  if (p.length < 14 || ascii(p, 0, 4) !== "Exif" || p[4] !== 0 || p[5] !== 0) return 1;
  const t = 6;
  const order = ascii(p, t, 2);
  if (order !== "II" && order !== "MM") return 1;
  const little = order === "II";
  const u16 = (o: number) => (little ? p[o]! | (p[o + 1]! << 8) : u16be(p, o));
  const u32 = (o: number) => (little ? u32le(p, o) : u32be(p, o));
  if (u16(t + 2) !== 42) return 1;
  const ifd = t + u32(t + 4);
  if (ifd + 2 > p.length) return 1;
  for (let k = 0, count = u16(ifd); k < count; k++) {
    const entry = ifd + 2 + k * 12;
    if (entry + 12 > p.length) return 1;
    if (u16(entry) === 0x0112 && u16(entry + 2) === 3) {
      const value = u16(entry + 8);
      return value >= 1 && value <= 8 ? value : 1;
    }
  }
  return 1;
}

/** The orientation in a bare TIFF header and IFD0 (PNG eXIf, WebP EXIF; "Exif\0\0" in front is read too). */
export function tiffOrientation(tiff: Uint8Array): number {
  if (ascii(tiff, 0, 4) === "Exif") return exifOrientation(tiff);
  const payload = new Uint8Array(6 + tiff.length);
  payload.set([0x45, 0x78, 0x69, 0x66, 0, 0]);
  payload.set(tiff, 6);
  return exifOrientation(payload);
}

/** A JPEG marker segment: its marker, the offset of its FF byte, and its length field (2 + payload). */
export interface JpegSegment {
  marker: number;
  offset: number;
  length: number;
}

/**
 * The marker segments of a JPEG up to and including the first start of scan (SOS, 0xDA), each with the offset
 * of its FF byte (fill bytes and the markers without a length skipped). Stops at the end of image, at
 * anything malformed, or where `b` ends (the last segment may run past it: its payload is not in `b`).
 */
export function* jpegSegments(b: Uint8Array): Generator<JpegSegment> {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return;
  let o = 2;
  while (o + 4 <= b.length) {
    if (b[o] !== 0xff) return;
    const marker = b[o + 1]!;
    if (marker === 0xff) {
      o += 1; // fill byte
      continue;
    }
    if (marker === 0x01 || marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7)) {
      o += 2; // markers without a length
      continue;
    }
    if (marker === 0xd9) return;
    const length = u16be(b, o + 2);
    if (length < 2) return;
    yield { marker, offset: o, length };
    if (marker === 0xda) return;
    o += 2 + length;
  }
}

/** Start-of-frame markers (baseline, extended, progressive, lossless, arithmetic); not DHT (C4), JPG (C8), DAC (CC). */
export const isStartOfFrame = (marker: number): boolean =>
  marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

/** A header, or MORE when `b` ends before the header does (a longer prefix may hold it), or null. */
const MORE = "more" as const;
type Parsed = ImageHeader | typeof MORE | null;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function parsePng(b: Uint8Array, whole: boolean): Parsed {
  if (b.length < 33) return MORE;
  if (ascii(b, 12, 4) !== "IHDR") return null;
  const colorType = b[25]!;
  let alpha = colorType === 4 || colorType === 6;
  let orientation = 1;
  let animated = false;
  // Chunks before the first IDAT: tRNS gives palette, grey or RGB images transparency; acTL makes an APNG
  // (it must come before IDAT); eXIf holds EXIF (a bare TIFF header), applied by browsers as for JPEG.
  for (let o = 33, chunks = 0; chunks < 256; chunks++) {
    // Held whole, a file whose chunks end before IDAT is read as far as it goes (its data is checked later).
    if (o + 8 > b.length) {
      if (whole) break;
      return MORE;
    }
    const length = u32be(b, o);
    const type = ascii(b, o + 4, 4);
    if (type === "IDAT" || type === "IEND") break;
    if (type === "tRNS") alpha = true;
    if (type === "acTL") animated = true;
    if (type === "eXIf") {
      if (o + 8 + length > b.length) {
        if (whole) break;
        return MORE;
      }
      orientation = tiffOrientation(b.subarray(o + 8, o + 8 + length));
    }
    o += 12 + length;
  }
  return { format: "png", width: u32be(b, 16), height: u32be(b, 20), orientation, alpha, animated };
}

function parseJpeg(b: Uint8Array): Parsed {
  let orientation = 1;
  let end = 2;
  for (const { marker, offset, length } of jpegSegments(b)) {
    end = offset + 2 + length;
    if (marker === 0xda) return null; // scan data before any frame header
    if (isStartOfFrame(marker)) {
      if (offset + 9 > b.length) return MORE;
      return {
        format: "jpeg",
        height: u16be(b, offset + 5),
        width: u16be(b, offset + 7),
        orientation,
        alpha: false,
        animated: false,
      };
    }
    if (marker === 0xe1 && orientation === 1) {
      if (end > b.length) return MORE;
      orientation = exifOrientation(b.subarray(offset + 4, end));
    }
  }
  // The walk stopped: at the end of what is held (more may follow), or at something malformed.
  return end + 4 > b.length ? MORE : null;
}

function parseWebp(b: Uint8Array, whole: boolean): Parsed {
  // The smallest, a lossless 1×1, is 26 bytes; each layout checks its own length below.
  if (b.length < 25) return MORE;
  const chunk = ascii(b, 12, 4);
  const d = 20; // the first chunk's payload
  if (chunk === "VP8 ") {
    if (b.length < d + 10) return MORE;
    // Frame tag (3 bytes), start code 9d 01 2a, then 14-bit width and height (2 bits of scaling each).
    if (b[d + 3] !== 0x9d || b[d + 4] !== 0x01 || b[d + 5] !== 0x2a) return null;
    const width = u16le(b, d + 6) & 0x3fff;
    const height = u16le(b, d + 8) & 0x3fff;
    return { format: "webp", width, height, orientation: 1, alpha: false, animated: false };
  }
  if (chunk === "VP8L") {
    // Signature 0x2f, then width − 1 and height − 1 as 14-bit little-endian fields, then the alpha hint.
    if (b[d] !== 0x2f) return null;
    const bits = u32le(b, d + 1);
    return {
      format: "webp",
      width: (bits & 0x3fff) + 1,
      height: ((bits >>> 14) & 0x3fff) + 1,
      orientation: 1,
      alpha: ((bits >>> 28) & 1) === 1,
      animated: false,
    };
  }
  if (chunk === "VP8X") {
    if (b.length < d + 10) return MORE;
    // Flags, 3 reserved bytes, canvas width − 1 and height − 1 as 24-bit little-endian.
    const flags = b[d]!;
    const orientation = (flags & 0x08) === 0 ? 1 : (webpOrientation(b) ?? (whole ? 1 : null));
    if (orientation === null) return MORE;
    return {
      format: "webp",
      width: u24le(b, d + 4) + 1,
      height: u24le(b, d + 7) + 1,
      orientation,
      alpha: (flags & 0x10) !== 0,
      animated: (flags & 0x02) !== 0,
    };
  }
  return null;
}

const u16le = (b: Uint8Array, o: number) => b[o]! | (b[o + 1]! << 8);

/**
 * The orientation in an extended WebP's EXIF chunk (the container places it after the image data, so the
 * walk may need the whole file), 1 without one; null when `b` ends before it.
 */
function webpOrientation(b: Uint8Array): number | null {
  for (let o = 12, chunks = 0; chunks < 64; chunks++) {
    if (o + 8 > b.length) return null;
    const size = u32le(b, o + 4);
    if (ascii(b, o, 4) === "EXIF") {
      return o + 8 + size > b.length ? null : tiffOrientation(b.subarray(o + 8, o + 8 + size));
    }
    o += 8 + size + (size & 1); // chunks are padded to an even size
  }
  return 1;
}

/** `whole`: `b` is the whole file, so a walk that reaches its end has read all there is. */
function parse(b: Uint8Array, whole: boolean): Parsed {
  if (b.length >= 8 && PNG_SIGNATURE.every((v, i) => b[i] === v)) return parsePng(b, whole);
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return parseJpeg(b);
  if (b.length >= 16 && ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WEBP") return parseWebp(b, whole);
  return null;
}

/** The header of the PNG, JPEG or WebP held whole in `b`; null when `b` holds none (or is cut short). */
export function readImageHeader(b: Uint8Array): ImageHeader | null {
  const h = parse(b, true);
  return h === MORE || h === null || h.width <= 0 || h.height <= 0 ? null : h;
}

/**
 * The header of an image read through `read` (bytes at an offset, fewer at the end of the file): growing
 * prefixes of it, from 64 KiB to at most `maxBytes`, since a JPEG's frame header may follow large EXIF
 * segments. Null when none is found.
 */
export async function readImageHeaderFrom(
  read: (offset: number, length: number) => Promise<Uint8Array>,
  maxBytes: number,
): Promise<ImageHeader | null> {
  for (let length = 64 * 1024; ; length *= 4) {
    const b = await read(0, Math.min(length, maxBytes));
    const h = parse(b, b.length < Math.min(length, maxBytes));
    if (h !== MORE) return h === null || h.width <= 0 || h.height <= 0 ? null : h;
    if (b.length < Math.min(length, maxBytes) || length >= maxBytes) return null;
  }
}
