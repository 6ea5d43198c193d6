/**
 * Media type from content (decisions.md §11, "Media sniffing"): magic bytes decide, never the extension or
 * Content-Type. One table of signatures (SIGNATURES, after imgproxy's imagetype/defs.go RegisterMagicBytes):
 * each format once, with the bytes that name it and the ffmpeg demuxer forced on ffmpeg/ffprobe for it
 * (`-f`), so that a hostile file can never reach the playlist, concat or image-sequence demuxers that open
 * other URLs. Images' headers are read by image-header.ts, the one reader of them.
 */
import { readImageHeader } from "./image-header.ts";
import type { MediaKind } from "./operations/index.ts";

export {
  exifOrientation,
  type ImageHeader,
  readImageHeader,
  readImageHeaderFrom,
  shownSize,
  swapsAxes,
  tiffOrientation,
} from "./image-header.ts";

export interface Sniffed {
  kind: MediaKind | "av";
  /** Short format name, also used in X-Engine-Media. */
  format: string;
  /** ffmpeg demuxer to force with -f. */
  demuxer: string;
}

const ascii = (buf: Uint8Array, offset: number, length: number): string =>
  String.fromCharCode(...buf.subarray(offset, offset + length));

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

/** An ADTS header: sync word, layer 0, a sample-rate index below 13. */
const isAdts = (buf: Uint8Array): boolean =>
  buf.length >= 7 && buf[0] === 0xff && (buf[1]! & 0xf6) === 0xf0 && ((buf[2]! >> 2) & 0xf) < 13;

function id3Length(buf: Uint8Array): number {
  if (buf.length < 10 || ascii(buf, 0, 3) !== "ID3") return 0;
  const size =
    ((buf[6]! & 0x7f) << 21) | ((buf[7]! & 0x7f) << 14) | ((buf[8]! & 0x7f) << 7) | (buf[9]! & 0x7f);
  return 10 + size + ((buf[5]! & 0x10) !== 0 ? 10 : 0);
}

/** Boxes an MP4/MOV/3GP file starts with. */
const MP4_FIRST_BOXES = new Set(["ftyp", "moov", "mdat", "free", "skip", "wide", "pnot", "styp"]);

/** A transport stream's sync byte (0x47) at three packets in a row, `size` bytes apart, from `first`. */
const tsSync = (buf: Uint8Array, first: number, size: number): boolean =>
  buf.length >= first + 2 * size + 1 && [0, 1, 2].every((k) => buf[first + k * size] === 0x47);

/** One format: the bytes that name it and what it is. */
interface Signature extends Sniffed {
  /**
   * Bytes at the start of the file, `?` for any byte (imgproxy's notation); several: any of them. Absent when
   * `test` alone decides.
   */
  magic?: readonly string[];
  /** Bytes no fixed pattern describes (frame headers, packet spacing), checked after `magic`. */
  test?: (buf: Uint8Array) => boolean;
  /** The format named more precisely from what follows the signature (an MP4 brand, a Matroska DocType). */
  refine?: (buf: Uint8Array) => Partial<Sniffed>;
  /** Also found after an ID3v2 tag (MP3, ADTS AAC, FLAC). */
  afterId3?: boolean;
}

/**
 * Every format the service reads, in the order they are tried (more specific first). Adding a format is one
 * entry here (docs/media-support.md "What is read" lists them).
 */
export const SIGNATURES: readonly Signature[] = [
  // Images (the Worker's image.watermark; the engine's image jobs)
  { format: "png", kind: "image", demuxer: "png_pipe", magic: ["\x89PNG\r\n"] },
  { format: "jpeg", kind: "image", demuxer: "jpeg_pipe", magic: ["\xff\xd8\xff"] },
  { format: "webp", kind: "image", demuxer: "webp_pipe", magic: ["RIFF????WEBP"] },
  // Containers that may hold video and/or audio
  {
    format: "mp4",
    kind: "av",
    demuxer: "mov",
    test: (b) => b.length >= 8 && MP4_FIRST_BOXES.has(ascii(b, 4, 4)),
    refine: (b) => {
      const brand = ascii(b, 4, 4) === "ftyp" && b.length >= 12 ? ascii(b, 8, 4) : "";
      if (brand === "M4A " || brand === "M4B ") return { kind: "audio", format: "m4a" };
      return brand === "qt  " ? { format: "mov" } : {};
    },
  },
  {
    format: "mkv",
    kind: "av",
    demuxer: "matroska",
    magic: ["\x1a\x45\xdf\xa3"],
    refine: (b) => (ascii(b, 0, Math.min(b.length, 64)).includes("webm") ? { format: "webm" } : {}),
  },
  { format: "avi", kind: "av", demuxer: "avi", magic: ["RIFF????AVI "] },
  { format: "flv", kind: "av", demuxer: "flv", magic: ["FLV\x01"] },
  { format: "mpegts", kind: "av", demuxer: "mpegts", test: (b) => tsSync(b, 0, 188) },
  // Blu-ray/AVCHD: 188-byte packets each after a 4-byte timecode; ffmpeg's mpegts demuxer reads both.
  { format: "m2ts", kind: "av", demuxer: "mpegts", test: (b) => tsSync(b, 4, 192) },
  { format: "ogg", kind: "av", demuxer: "ogg", magic: ["OggS"] },
  // Audio
  { format: "wav", kind: "audio", demuxer: "wav", magic: ["RIFF????WAVE", "RF64????WAVE"] },
  { format: "aiff", kind: "audio", demuxer: "aiff", magic: ["FORM????AIFF", "FORM????AIFC"] },
  { format: "caf", kind: "audio", demuxer: "caf", magic: ["caff\x00\x01"] },
  { format: "flac", kind: "audio", demuxer: "flac", magic: ["fLaC"], afterId3: true },
  { format: "aac", kind: "audio", demuxer: "aac", test: isAdts, afterId3: true },
  { format: "mp3", kind: "audio", demuxer: "mp3", test: (b) => isMpegAudioFrame(b, 0), afterId3: true },
];

/** A magic pattern as char codes, -1 for `?` (any byte). */
const compiled = new Map<string, number[]>();
function pattern(magic: string): number[] {
  let codes = compiled.get(magic);
  if (codes === undefined) {
    codes = [...magic].map((c) => (c === "?" ? -1 : c.charCodeAt(0)));
    compiled.set(magic, codes);
  }
  return codes;
}

const matchesMagic = (buf: Uint8Array, magic: string): boolean => {
  const codes = pattern(magic);
  return buf.length >= codes.length && codes.every((c, i) => c === -1 || buf[i] === c);
};

function matches(sig: Signature, buf: Uint8Array): boolean {
  if (sig.magic !== undefined && !sig.magic.some((m) => matchesMagic(buf, m))) return false;
  return sig.test?.(buf) ?? true;
}

const named = (sig: Signature, buf: Uint8Array): Sniffed => ({
  kind: sig.kind,
  format: sig.format,
  demuxer: sig.demuxer,
  ...sig.refine?.(buf),
});

/** Identifies the media in the first bytes of a file, or returns null when it is nothing we accept. */
export function sniff(buf: Uint8Array): Sniffed | null {
  if (buf.length < 4) return null;
  const id3 = id3Length(buf);
  if (id3 > 0) {
    // ID3v2 may precede MP3, AAC (ADTS) or FLAC; when the tag is longer than what was sniffed, trust MP3.
    const rest = buf.subarray(id3);
    const sig = SIGNATURES.find((s) => s.afterId3 === true && rest.length >= 4 && matches(s, rest));
    return sig === undefined ? { kind: "audio", format: "mp3", demuxer: "mp3" } : named(sig, rest);
  }
  const sig = SIGNATURES.find((s) => matches(s, buf));
  return sig === undefined ? null : named(sig, buf);
}

/** Width and height of a PNG, JPEG or WebP from its header (image-header.ts), or null when not found in `buf`. */
export function imageSize(buf: Uint8Array): { width: number; height: number } | null {
  const header = readImageHeader(buf);
  return header === null ? null : { width: header.width, height: header.height };
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
