/**
 * Media type from content (decisions.md §11): magic bytes decide, never the extension or Content-Type.
 * The demuxer named here is forced on ffmpeg/ffprobe (`-f`), so a hostile file can never reach the
 * playlist, concat or image-sequence demuxers that open other URLs.
 */
import type { MediaKind } from "./operations/index.ts";

export interface Sniffed {
  kind: MediaKind | "av";
  /** Short format name, also used in X-Engine-Media. */
  format: string;
  /** ffmpeg demuxer to force with -f. */
  demuxer: string;
}

const ascii = (buf: Uint8Array, offset: number, length: number): string =>
  String.fromCharCode(...buf.subarray(offset, offset + length));

const MP4_FIRST_BOXES = new Set(["ftyp", "moov", "mdat", "free", "skip", "wide", "pnot", "styp"]);

/** MPEG audio frame header check (layer III / II, sane bitrate and sample-rate indexes). */
function isMpegAudioFrame(buf: Uint8Array, i: number): boolean {
  if (i + 4 > buf.length) return false;
  const b1 = buf[i + 1]!;
  const b2 = buf[i + 2]!;
  if (buf[i] !== 0xff || (b1 & 0xe0) !== 0xe0) return false;
  const version = (b1 >> 3) & 3;
  const layer = (b1 >> 1) & 3;
  const bitrate = b2 >> 4;
  const rate = (b2 >> 2) & 3;
  return version !== 1 && layer !== 0 && bitrate !== 0 && bitrate !== 15 && rate !== 3;
}

function isAdts(buf: Uint8Array): boolean {
  return buf.length >= 7 && buf[0] === 0xff && (buf[1]! & 0xf6) === 0xf0 && ((buf[2]! >> 2) & 0xf) < 13;
}

function id3Length(buf: Uint8Array): number {
  if (buf.length < 10 || ascii(buf, 0, 3) !== "ID3") return 0;
  const size =
    ((buf[6]! & 0x7f) << 21) | ((buf[7]! & 0x7f) << 14) | ((buf[8]! & 0x7f) << 7) | (buf[9]! & 0x7f);
  return 10 + size + ((buf[5]! & 0x10) !== 0 ? 10 : 0);
}

/** Identifies the media in the first bytes of a file, or returns null when it is nothing we accept. */
export function sniff(buf: Uint8Array): Sniffed | null {
  if (buf.length < 4) return null;
  // Images
  if (
    buf.length >= 8 &&
    buf[0] === 0x89 &&
    ascii(buf, 1, 3) === "PNG" &&
    buf[4] === 0x0d &&
    buf[5] === 0x0a
  ) {
    return { kind: "image", format: "png", demuxer: "png_pipe" };
  }
  if (buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) {
    return { kind: "image", format: "jpeg", demuxer: "jpeg_pipe" };
  }
  if (buf.length >= 12 && ascii(buf, 0, 4) === "RIFF" && ascii(buf, 8, 4) === "WEBP") {
    return { kind: "image", format: "webp", demuxer: "webp_pipe" };
  }
  // Containers that may hold video and/or audio
  if (buf.length >= 8 && MP4_FIRST_BOXES.has(ascii(buf, 4, 4))) {
    const brand = ascii(buf, 4, 4) === "ftyp" && buf.length >= 12 ? ascii(buf, 8, 4) : "";
    const audioBrand = brand === "M4A " || brand === "M4B ";
    return {
      kind: audioBrand ? "audio" : "av",
      format: audioBrand ? "m4a" : brand === "qt  " ? "mov" : "mp4",
      demuxer: "mov",
    };
  }
  if (buf[0] === 0x1a && buf[1] === 0x45 && buf[2] === 0xdf && buf[3] === 0xa3) {
    const head = ascii(buf, 0, Math.min(buf.length, 64));
    return { kind: "av", format: head.includes("webm") ? "webm" : "mkv", demuxer: "matroska" };
  }
  if (buf.length >= 12 && ascii(buf, 0, 4) === "RIFF" && ascii(buf, 8, 4) === "AVI ") {
    return { kind: "av", format: "avi", demuxer: "avi" };
  }
  if (ascii(buf, 0, 3) === "FLV" && buf[3] === 1) return { kind: "av", format: "flv", demuxer: "flv" };
  if (buf.length >= 377 && buf[0] === 0x47 && buf[188] === 0x47 && buf[376] === 0x47) {
    return { kind: "av", format: "mpegts", demuxer: "mpegts" };
  }
  // Audio
  if (buf.length >= 12 && ascii(buf, 0, 4) === "RIFF" && ascii(buf, 8, 4) === "WAVE") {
    return { kind: "audio", format: "wav", demuxer: "wav" };
  }
  if (ascii(buf, 0, 4) === "fLaC") return { kind: "audio", format: "flac", demuxer: "flac" };
  if (ascii(buf, 0, 4) === "OggS") return { kind: "av", format: "ogg", demuxer: "ogg" };
  const id3 = id3Length(buf);
  if (id3 > 0) {
    // ID3v2 may precede MP3, AAC (ADTS) or FLAC; if the tag is longer than what we sniffed, trust MP3.
    if (id3 >= buf.length) return { kind: "audio", format: "mp3", demuxer: "mp3" };
    const rest = buf.subarray(id3);
    if (ascii(rest, 0, 4) === "fLaC") return { kind: "audio", format: "flac", demuxer: "flac" };
    if (isAdts(rest) && !isMpegAudioFrame(rest, 0)) return { kind: "audio", format: "aac", demuxer: "aac" };
    return { kind: "audio", format: "mp3", demuxer: "mp3" };
  }
  if (isAdts(buf)) return { kind: "audio", format: "aac", demuxer: "aac" };
  if (isMpegAudioFrame(buf, 0)) return { kind: "audio", format: "mp3", demuxer: "mp3" };
  return null;
}

/** Width and height of a PNG, JPEG or WebP from its header, or null when not found in `buf`. */
export function imageSize(buf: Uint8Array): { width: number; height: number } | null {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (buf.length >= 24 && buf[0] === 0x89 && ascii(buf, 12, 4) === "IHDR") {
    return { width: view.getUint32(16), height: view.getUint32(20) };
  }
  if (buf.length >= 30 && ascii(buf, 0, 4) === "RIFF" && ascii(buf, 8, 4) === "WEBP") {
    const chunk = ascii(buf, 12, 4);
    if (chunk === "VP8X") {
      const w = 1 + (buf[24]! | (buf[25]! << 8) | (buf[26]! << 16));
      const h = 1 + (buf[27]! | (buf[28]! << 8) | (buf[29]! << 16));
      return { width: w, height: h };
    }
    if (chunk === "VP8 ") {
      return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
    }
    if (chunk === "VP8L") {
      const bits = view.getUint32(21, true);
      return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
    }
    return null;
  }
  if (buf.length >= 4 && buf[0] === 0xff && buf[1] === 0xd8) {
    let i = 2;
    while (i + 9 < buf.length) {
      if (buf[i] !== 0xff) return null;
      const marker = buf[i + 1]!;
      if (marker === 0xff) {
        i++;
        continue;
      }
      const length = view.getUint16(i + 2);
      // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC)
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { width: view.getUint16(i + 7), height: view.getUint16(i + 5) };
      }
      i += 2 + length;
    }
  }
  return null;
}

/**
 * Walks the top-level boxes of an MP4/MOV file and reports a box that claims to end after the end of the
 * file: the file was cut short. `read` returns the bytes at an offset (fewer at end of file); the walk stops
 * at `scanLimit` so a non-faststart file is not read to its end just for this check.
 */
export async function mp4Truncation(
  read: (offset: number, length: number) => Promise<Uint8Array>,
  totalBytes: number,
  scanLimit: number,
): Promise<string | null> {
  let offset = 0;
  for (let boxes = 0; boxes < 64 && offset + 8 <= totalBytes && offset < scanLimit; boxes++) {
    const head = await read(offset, 16);
    if (head.length < 8) return "the file ends inside a box header";
    const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
    let size = view.getUint32(0);
    if (size === 1) {
      if (head.length < 16) return "the file ends inside a box header";
      size = Number(view.getBigUint64(8));
    } else if (size === 0) {
      return null; // box runs to the end of the file
    }
    if (size < 8) return "a box has an invalid size";
    if (offset + size > totalBytes) {
      return `the ${ascii(head, 4, 4).replace(/[^\x20-\x7e]/g, "?")} box is cut short`;
    }
    offset += size;
  }
  return null;
}

/** What an image's header says, read before anything is decoded (decisions.md §9). */
export interface ImageHeader {
  /** As stored; shown turned by `orientation` (EXIF tag 0x0112, 1–8: JPEG APP1, PNG eXIf, WebP EXIF). */
  width: number;
  height: number;
  orientation: number;
  /** The image carries transparency (PNG alpha colour type or tRNS, WebP alpha flag). */
  alpha: boolean;
  /** APNG or animated WebP (not supported). */
  animated: boolean;
}

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
 * malformed. Pure: the Worker uses it too (src/images/orientation.ts).
 */
export function exifOrientation(p: Uint8Array): number {
  if (p.length < 14 || ascii(p, 0, 4) !== "Exif" || p[4] !== 0 || p[5] !== 0) return 1;
  const t = 6;
  const order = ascii(p, t, 2);
  if (order !== "II" && order !== "MM") return 1;
  const little = order === "II";
  const u16 = (o: number) => (little ? p[o]! | (p[o + 1]! << 8) : (p[o]! << 8) | p[o + 1]!);
  const u32 = (o: number) =>
    little
      ? (p[o]! | (p[o + 1]! << 8) | (p[o + 2]! << 16) | (p[o + 3]! << 24)) >>> 0
      : ((p[o]! << 24) | (p[o + 1]! << 16) | (p[o + 2]! << 8) | p[o + 3]!) >>> 0;
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

/** The orientation in an extended WebP's EXIF chunk, walking its chunks; 1 without one. */
async function webpOrientation(
  read: (offset: number, length: number) => Promise<Uint8Array>,
): Promise<number> {
  for (let offset = 12, chunks = 0; chunks < 64; chunks++) {
    const chunk = await read(offset, 8);
    if (chunk.length < 8) break;
    const size = (chunk[4]! | (chunk[5]! << 8) | (chunk[6]! << 16) | (chunk[7]! << 24)) >>> 0;
    if (ascii(chunk, 0, 4) === "EXIF")
      return tiffOrientation(await read(offset + 8, Math.min(size, 64 * 1024)));
    offset += 8 + size + (size & 1); // chunks are padded to an even size
  }
  return 1;
}

/**
 * Reads the header of a PNG, JPEG or WebP through `read` (bytes at an offset, fewer at the end of the file),
 * walking PNG chunks and JPEG segments as far as needed (a JPEG's frame header may follow large EXIF
 * segments), so that limits are checked before the image is decoded. Null when no header is found.
 */
export async function readImageHeader(
  read: (offset: number, length: number) => Promise<Uint8Array>,
  format: string,
): Promise<ImageHeader | null> {
  const u16 = (b: Uint8Array, o: number) => (b[o]! << 8) | b[o + 1]!;
  const u32 = (b: Uint8Array, o: number) =>
    ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
  if (format === "png") {
    const head = await read(0, 33);
    if (head.length < 33 || ascii(head, 12, 4) !== "IHDR") return null;
    const colorType = head[25]!;
    let alpha = colorType === 4 || colorType === 6;
    let orientation = 1;
    let animated = false;
    // Chunks before the first IDAT: tRNS gives palette, grey or RGB images transparency; acTL makes an APNG;
    // eXIf holds EXIF (a bare TIFF header), whose orientation browsers apply as for JPEG.
    for (let offset = 33, chunks = 0; chunks < 256; chunks++) {
      const chunk = await read(offset, 8);
      if (chunk.length < 8) break;
      const type = ascii(chunk, 4, 4);
      const length = u32(chunk, 0);
      if (type === "IDAT" || type === "IEND") break;
      if (type === "tRNS") alpha = true;
      if (type === "acTL") animated = true;
      if (type === "eXIf") orientation = tiffOrientation(await read(offset + 8, Math.min(length, 64 * 1024)));
      offset += 12 + length;
    }
    return { width: u32(head, 16), height: u32(head, 20), orientation, alpha, animated };
  }
  if (format === "webp") {
    const head = await read(0, 30);
    if (head.length < 30 || ascii(head, 0, 4) !== "RIFF" || ascii(head, 8, 4) !== "WEBP") return null;
    const chunk = ascii(head, 12, 4);
    if (chunk === "VP8X") {
      const flags = head[20]!;
      return {
        width: 1 + (head[24]! | (head[25]! << 8) | (head[26]! << 16)),
        height: 1 + (head[27]! | (head[28]! << 8) | (head[29]! << 16)),
        orientation: (flags & 0x08) !== 0 ? await webpOrientation(read) : 1,
        alpha: (flags & 0x10) !== 0,
        animated: (flags & 0x02) !== 0,
      };
    }
    if (chunk === "VP8 ") {
      if (head[23] !== 0x9d || head[24] !== 0x01 || head[25] !== 0x2a) return null;
      const width = (head[26]! | (head[27]! << 8)) & 0x3fff;
      const height = (head[28]! | (head[29]! << 8)) & 0x3fff;
      return { width, height, orientation: 1, alpha: false, animated: false };
    }
    if (chunk === "VP8L") {
      if (head[20] !== 0x2f) return null;
      const bits = (head[21]! | (head[22]! << 8) | (head[23]! << 16) | (head[24]! << 24)) >>> 0;
      return {
        width: (bits & 0x3fff) + 1,
        height: ((bits >>> 14) & 0x3fff) + 1,
        orientation: 1,
        alpha: ((bits >>> 28) & 1) === 1,
        animated: false,
      };
    }
    return null;
  }
  if (format === "jpeg") {
    let offset = 2;
    let orientation = 1;
    for (let segments = 0; segments < 4096; segments++) {
      const seg = await read(offset, 10);
      if (seg.length < 4 || seg[0] !== 0xff) return null;
      const marker = seg[1]!;
      if (marker === 0xff) {
        offset++; // fill byte
        continue;
      }
      if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
        offset += 2; // markers without a length
        continue;
      }
      if (marker === 0xda || marker === 0xd9) return null; // scan data or end before any frame header
      // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC)
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        if (seg.length < 9) return null;
        return { width: u16(seg, 7), height: u16(seg, 5), orientation, alpha: false, animated: false };
      }
      const length = u16(seg, 2);
      if (length < 2) return null;
      if (marker === 0xe1 && orientation === 1) {
        orientation = exifOrientation(await read(offset + 4, Math.min(length - 2, 64 * 1024)));
      }
      offset += 2 + length;
    }
  }
  return null;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * What a file that is not a readable PNG, JPEG or WebP is, for an error that says so: "a GIF", "a HEIF/HEIC
 * image", …; "a WebP file whose header cannot be read" for a known signature with a broken header; null when
 * nothing is recognised. The Worker's image.watermark (src/images) and the engine's fetch and image jobs name
 * a refused file by it.
 */
export function describeUnreadable(b: Uint8Array): string | null {
  const head = ascii(b, 0, 12);
  if (head.startsWith("GIF8")) return "a GIF";
  if (head.slice(4, 8) === "ftyp") {
    const brand = head.slice(8, 12);
    if (brand === "avif" || brand === "avis") return "an AVIF image";
    if (/^(heic|heix|hevc|heim|heis|mif1|msf1)$/.test(brand)) return "a HEIF/HEIC image";
    return "an MP4/QuickTime file";
  }
  if (head.startsWith("BM")) return "a BMP image";
  if (head.startsWith("II*\0") || head.startsWith("MM\0*")) return "a TIFF image";
  if (PNG_SIGNATURE.every((v, i) => b[i] === v)) return "a PNG file whose header cannot be read";
  if (b[0] === 0xff && b[1] === 0xd8) return "a JPEG file whose header cannot be read";
  if (head.startsWith("RIFF") && head.slice(8) === "WEBP") return "a WebP file whose header cannot be read";
  return null;
}

/**
 * The refusal of a file that is no PNG, JPEG or WebP, naming what it is when that is known (HEIC, GIF, …);
 * `subject`: the file's name in it ("the source", "the watermark").
 */
export function notAnImage(head: Uint8Array, subject = "the source"): string {
  const what = describeUnreadable(head);
  return what === null
    ? `${subject} is not a PNG, JPEG or WebP image`
    : `${subject} is ${what}; PNG, JPEG and WebP are supported`;
}

/**
 * A HEIF/HEIC or AVIF still image (an ISO-BMFF file whose major brand is an image's: its pictures are items,
 * not a track ffmpeg reads), named for a refusal; null for anything else, image sequences (brands hevc, heis,
 * msf1, avis: a track) included.
 */
export function stillImageInMp4(head: Uint8Array): string | null {
  if (head.length < 12 || ascii(head, 4, 4) !== "ftyp") return null;
  const brand = ascii(head, 8, 4);
  if (/^(heic|heix|heim|mif1)$/.test(brand)) return "a HEIF/HEIC image";
  return brand === "avif" ? "an AVIF image" : null;
}
