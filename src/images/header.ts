/**
 * Format and dimensions from the first bytes of a PNG, JPEG or WebP, without decoding, so limits are checked
 * before any work starts. Anything else (or a header cut short) is not an image: null.
 */
import { describeUnreadable } from "@p6/contract/sniff";
import { exifOrientation, type Orientation, tiffOrientation } from "./orientation";

/** Shared with the engine, whose fetch refuses such a file by the same name (@p6/contract/sniff). */
export { describeUnreadable };

export type ImageFormat = "jpeg" | "png" | "webp";

export type ImageHeader = {
  format: ImageFormat;
  /** As stored; shown turned by `orientation` (EXIF: JPEG APP1, PNG eXIf, WebP EXIF chunk). */
  width: number;
  height: number;
  orientation: Orientation;
  /** APNG (acTL) or animated WebP (VP8X animation flag). Not supported by the codecs: callers refuse it. */
  animated: boolean;
};

/** decisions.md §9: sources are at most 16.8 megapixels and 25 MiB. */
export const MAX_IMAGE_PIXELS = 16_800_000;
export const MAX_IMAGE_BYTES = 25 * 1024 * 1024;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export function readImageHeader(bytes: Uint8Array): ImageHeader | null {
  const header = readPng(bytes) ?? readJpeg(bytes) ?? readWebp(bytes);
  return header && header.width > 0 && header.height > 0 ? header : null;
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

function u16be(b: Uint8Array, o: number): number {
  return (b[o]! << 8) | b[o + 1]!;
}

function u32be(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

function u24le(b: Uint8Array, o: number): number {
  return b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16);
}

function readPng(b: Uint8Array): ImageHeader | null {
  // Signature, then the IHDR chunk: length 13, type, width, height.
  if (b.length < 24 || PNG_SIGNATURE.some((v, i) => b[i] !== v) || ascii(b, 12, 4) !== "IHDR") return null;
  let orientation: Orientation = 1;
  let animated = false;
  // acTL (APNG) must come before the first IDAT; eXIf should (and browsers ignore one after it).
  for (let o = 8; o + 8 <= b.length; ) {
    const length = u32be(b, o);
    const type = ascii(b, o + 4, 4);
    if (type === "IDAT" || type === "IEND") break;
    if (type === "acTL") animated = true;
    if (type === "eXIf") orientation = tiffOrientation(b.subarray(o + 8, o + 8 + length));
    o += 12 + length;
  }
  return { format: "png", width: u32be(b, 16), height: u32be(b, 20), orientation, animated };
}

/** Start-of-frame markers (baseline, extended, progressive, lossless, arithmetic); not DHT (C4), JPG (C8), DAC (CC). */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function readJpeg(b: Uint8Array): ImageHeader | null {
  let orientation: Orientation = 1;
  for (const { marker, offset } of jpegSegments(b)) {
    if (marker === 0xda) return null; // scan data before any frame header
    if (marker === 0xe1 && orientation === 1) {
      orientation = exifOrientation(b.subarray(offset + 4, offset + 2 + u16be(b, offset + 2)));
    }
    if (isStartOfFrame(marker)) {
      if (offset + 9 > b.length) return null;
      const [height, width] = [u16be(b, offset + 5), u16be(b, offset + 7)];
      return { format: "jpeg", height, width, orientation, animated: false };
    }
  }
  return null;
}

/**
 * The marker segments of a JPEG up to and including the first start of scan (SOS, 0xDA), each with the offset
 * of its FF byte. Stops early at anything malformed or cut short.
 */
export function* jpegSegments(b: Uint8Array): Generator<{ marker: number; offset: number }> {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return;
  let o = 2;
  while (o + 4 <= b.length) {
    if (b[o] !== 0xff) return;
    const marker = b[o + 1]!;
    if (marker === 0xff) {
      o += 1; // fill byte
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      o += 2; // markers without a length
      continue;
    }
    if (marker === 0xd9) return;
    const length = u16be(b, o + 2);
    if (length < 2) return;
    yield { marker, offset: o };
    if (marker === 0xda) return;
    o += 2 + length;
  }
}

function readWebp(b: Uint8Array): ImageHeader | null {
  // The smallest: a lossless 1×1 (26 bytes); each layout is checked for its own length below.
  if (b.length < 25 || ascii(b, 0, 4) !== "RIFF" || ascii(b, 8, 4) !== "WEBP") return null;
  const chunk = ascii(b, 12, 4);
  const d = 20; // first chunk's payload
  if (chunk === "VP8 ") {
    if (b.length < d + 10) return null;
    // Frame tag (3 bytes), start code 9d 01 2a, then 14-bit width and height (2 bits of scaling each).
    if (b[d + 3] !== 0x9d || b[d + 4] !== 0x01 || b[d + 5] !== 0x2a) return null;
    const width = (b[d + 6]! | (b[d + 7]! << 8)) & 0x3fff;
    const height = (b[d + 8]! | (b[d + 9]! << 8)) & 0x3fff;
    return { format: "webp", width, height, orientation: 1, animated: false };
  }
  if (chunk === "VP8L") {
    // Signature 0x2f, then width − 1 and height − 1 as 14-bit little-endian fields.
    if (b[d] !== 0x2f) return null;
    const bits = (b[d + 1]! | (b[d + 2]! << 8) | (b[d + 3]! << 16) | (b[d + 4]! << 24)) >>> 0;
    return {
      format: "webp",
      width: (bits & 0x3fff) + 1,
      height: ((bits >>> 14) & 0x3fff) + 1,
      orientation: 1,
      animated: false,
    };
  }
  if (chunk === "VP8X") {
    if (b.length < d + 10) return null;
    // Flags, 3 reserved bytes, canvas width − 1 and height − 1 as 24-bit little-endian.
    const animated = (b[d]! & 0x02) !== 0;
    return {
      format: "webp",
      width: u24le(b, d + 4) + 1,
      height: u24le(b, d + 7) + 1,
      orientation: webpOrientation(b),
      animated,
    };
  }
  return null;
}

/** The orientation in an extended WebP's EXIF chunk (a TIFF header and IFD0), 1 without one. */
function webpOrientation(b: Uint8Array): Orientation {
  for (let o = 12; o + 8 <= b.length; ) {
    const size = (b[o + 4]! | (b[o + 5]! << 8) | (b[o + 6]! << 16) | (b[o + 7]! << 24)) >>> 0;
    if (ascii(b, o, 4) === "EXIF") return tiffOrientation(b.subarray(o + 8, o + 8 + size));
    o += 8 + size + (size & 1); // chunks are padded to an even size
  }
  return 1;
}
