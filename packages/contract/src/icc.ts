/**
 * ICC colour profiles of PNG, JPEG and WebP images, carried from a source to its watermarked output so a
 * Display P3 or Adobe RGB photo keeps its colours (issue 12): read from the source (JPEG APP2 `ICC_PROFILE`
 * segments, PNG `iCCP`, WebP `ICCP`) and written into the encoded output the same way. Only RGB profiles
 * are carried: the outputs are RGB, so a CMYK profile (its pixels were converted) or a gray one would lie.
 * Pure (web streams only): the Worker uses it for every output, the engine for WebP, which ffmpeg 5.1's
 * libwebp encoder writes without the profile (its PNG and JPEG encoders keep it).
 */
import { jpegSegments } from "./image-header.ts";

export type IccImageFormat = "jpeg" | "png" | "webp";

const ICC_MARKER = "ICC_PROFILE\0";
/** An APP2 segment holds at most 65533 bytes after its length: the marker, sequence number and count. */
const JPEG_ICC_CHUNK = 65533 - ICC_MARKER.length - 2;

/** Larger profiles (real ones are a few KB, rarely 1 MB) are not carried. */
const MAX_PROFILE_BYTES = 4 * 1024 * 1024;

const ascii = (b: Uint8Array, o: number, n: number) => String.fromCharCode(...b.subarray(o, o + n));
const u32be = (b: Uint8Array, o: number) =>
  ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
const u32le = (b: Uint8Array, o: number) =>
  (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;

/** The source's RGB colour profile, or null when it has none (or one that is not RGB, or malformed). */
export async function readRgbProfile(format: IccImageFormat, bytes: Uint8Array): Promise<Uint8Array | null> {
  const profile = await embeddedProfile(format, bytes);
  if (!profile || profile.length < 128 || profile.length > MAX_PROFILE_BYTES) return null;
  if (u32be(profile, 0) !== profile.length) return null;
  return ascii(profile, 16, 4) === "RGB " ? profile : null;
}

/** Whether the image embeds a colour profile of any kind (RGB, CMYK, gray, or one we cannot read). */
export async function hasProfile(format: IccImageFormat, bytes: Uint8Array): Promise<boolean> {
  return (await embeddedProfile(format, bytes)) !== null;
}

async function embeddedProfile(format: IccImageFormat, bytes: Uint8Array): Promise<Uint8Array | null> {
  return format === "jpeg" ? jpegProfile(bytes) : format === "png" ? pngProfile(bytes) : webpProfile(bytes);
}

/** The encoded image with `profile` embedded. */
export async function withProfile(
  format: IccImageFormat,
  encoded: Uint8Array,
  profile: Uint8Array,
): Promise<Uint8Array> {
  if (format === "jpeg") return jpegWithProfile(encoded, profile);
  if (format === "png") return pngWithProfile(encoded, profile);
  return webpWithProfile(encoded, profile);
}

function jpegProfile(b: Uint8Array): Uint8Array | null {
  const parts: { seq: number; data: Uint8Array }[] = [];
  for (const { marker, offset, length } of jpegSegments(b)) {
    if (marker !== 0xe2 || ascii(b, offset + 4, ICC_MARKER.length) !== ICC_MARKER) continue;
    const start = offset + 4 + ICC_MARKER.length;
    parts.push({ seq: b[start]!, data: b.subarray(start + 2, offset + 2 + length) });
  }
  if (parts.length === 0) return null;
  parts.sort((a, c) => a.seq - c.seq);
  return concat(parts.map((p) => p.data));
}

function jpegWithProfile(jpeg: Uint8Array, profile: Uint8Array): Uint8Array {
  const count = Math.ceil(profile.length / JPEG_ICC_CHUNK);
  const segments: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const data = profile.subarray(i * JPEG_ICC_CHUNK, (i + 1) * JPEG_ICC_CHUNK);
    const length = 2 + ICC_MARKER.length + 2 + data.length;
    const head = [0xff, 0xe2, length >> 8, length & 0xff, ...[...ICC_MARKER].map((c) => c.charCodeAt(0))];
    segments.push(Uint8Array.from([...head, i + 1, count]), data);
  }
  // After SOI and a JFIF APP0, which must come first.
  let at = 2;
  if (jpeg[2] === 0xff && jpeg[3] === 0xe0) at = 4 + ((jpeg[4]! << 8) | jpeg[5]!);
  return concat([jpeg.subarray(0, at), ...segments, jpeg.subarray(at)]);
}

function* pngChunks(b: Uint8Array): Generator<{ type: string; data: Uint8Array; offset: number }> {
  for (let o = 8; o + 12 <= b.length; ) {
    const length = u32be(b, o);
    const type = ascii(b, o + 4, 4);
    yield { type, data: b.subarray(o + 8, o + 8 + length), offset: o };
    if (type === "IEND") return;
    o += 12 + length;
  }
}

async function pngProfile(b: Uint8Array): Promise<Uint8Array | null> {
  for (const { type, data } of pngChunks(b)) {
    if (type === "IDAT") return null;
    if (type !== "iCCP") continue;
    const nameEnd = data.indexOf(0);
    if (nameEnd < 1 || data[nameEnd + 1] !== 0) return null; // compression method 0: zlib
    const compressed = data.subarray(nameEnd + 2);
    return transform(new DecompressionStream("deflate"), compressed, MAX_PROFILE_BYTES).catch(() => null);
  }
  return null;
}

async function pngWithProfile(png: Uint8Array, profile: Uint8Array): Promise<Uint8Array> {
  const name = Uint8Array.of(0x69, 0x63, 0x63, 0, 0); // "icc", NUL, compression method 0
  const compressed = (await transform(new CompressionStream("deflate"), profile))!;
  const chunk = pngChunk("iCCP", concat([name, compressed]));
  const ihdrEnd = 8 + 12 + 13; // signature, IHDR
  return concat([png.subarray(0, ihdrEnd), chunk, png.subarray(ihdrEnd)]);
}

/** One PNG chunk: length, type, data and its CRC. */
export function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const chunk = new Uint8Array(12 + data.length);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) chunk[4 + i] = type.charCodeAt(i);
  chunk.set(data, 8);
  view.setUint32(8 + data.length, crc32(chunk.subarray(4, 8 + data.length)));
  return chunk;
}

let crcTable: Uint32Array | undefined;
function crc32(bytes: Uint8Array): number {
  crcTable ??= Uint32Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c;
  });
  let c = 0xffffffff;
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function* webpChunks(
  b: Uint8Array,
): Generator<{ type: string; data: Uint8Array; offset: number; end: number }> {
  for (let o = 12; o + 8 <= b.length; ) {
    const size = u32le(b, o + 4);
    const end = Math.min(b.length, o + 8 + size + (size & 1)); // chunks are padded to an even size
    yield { type: ascii(b, o, 4), data: b.subarray(o + 8, o + 8 + size), offset: o, end };
    o = end;
  }
}

function webpProfile(b: Uint8Array): Uint8Array | null {
  for (const { type, data } of webpChunks(b)) if (type === "ICCP") return data;
  return null;
}

/**
 * Rewraps a still WebP as the extended layout (VP8X) with an ICCP chunk before the image data, as the
 * container spec orders them; the canvas size and the alpha flag come from the image chunks.
 */
function webpWithProfile(webp: Uint8Array, profile: Uint8Array): Uint8Array {
  let width = 0;
  let height = 0;
  let alpha = false;
  const images: Uint8Array[] = [];
  for (const { type, data, offset, end } of webpChunks(webp)) {
    if (type === "VP8X") {
      width = 1 + (data[4]! | (data[5]! << 8) | (data[6]! << 16));
      height = 1 + (data[7]! | (data[8]! << 8) | (data[9]! << 16));
      alpha = (data[0]! & 0x10) !== 0;
    } else if (type === "ICCP") {
    } else {
      if (type === "VP8 " && width === 0) {
        width = (data[6]! | (data[7]! << 8)) & 0x3fff;
        height = (data[8]! | (data[9]! << 8)) & 0x3fff;
      }
      if (type === "VP8L" && width === 0) {
        const bits = u32le(data, 1);
        width = (bits & 0x3fff) + 1;
        height = ((bits >>> 14) & 0x3fff) + 1;
        alpha = ((bits >>> 28) & 1) === 1;
      }
      if (type === "ALPH") alpha = true;
      images.push(webp.subarray(offset, end));
    }
  }
  const le = (v: number, n: number) => Array.from({ length: n }, (_, i) => (v >>> (8 * i)) & 0xff);
  const tag = (s: string) => [...s].map((c) => c.charCodeAt(0));
  const vp8x = Uint8Array.from([
    ...tag("VP8X"),
    ...le(10, 4),
    0x20 | (alpha ? 0x10 : 0),
    0,
    0,
    0,
    ...le(width - 1, 3),
    ...le(height - 1, 3),
  ]);
  const iccp = [Uint8Array.from([...tag("ICCP"), ...le(profile.length, 4)]), profile];
  if (profile.length & 1) iccp.push(new Uint8Array(1));
  const body = concat([Uint8Array.from(tag("WEBP")), vp8x, ...iccp, ...images]);
  return concat([Uint8Array.from([...tag("RIFF"), ...le(body.length, 4)]), body]);
}

/**
 * The input through a (de)compression stream; null when the output would exceed `max` bytes (a zlib bomb in
 * an iCCP chunk is stopped there, not inflated).
 */
async function transform(
  stream: CompressionStream | DecompressionStream,
  input: Uint8Array,
  max = Number.POSITIVE_INFINITY,
): Promise<Uint8Array | null> {
  const reader = new Blob([input as Uint8Array<ArrayBuffer>]).stream().pipeThrough(stream).getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return concat(parts);
    total += value.length;
    if (total > max) {
      await reader.cancel();
      return null;
    }
    parts.push(value);
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
