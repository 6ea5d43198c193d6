import {
  InflateLimitError,
  inflateBounded,
  inflationMessage,
  PNG_CHANNELS,
  pngDataBytes,
  pngPasses,
  pngRowBytes,
} from "@p6/contract/png-data";
import { crc32 } from "./crc32";
import { DecodeLimitError } from "./errors";
import { MAX_IMAGE_PIXELS } from "./header";
import type { Rgba } from "./rgba";

/**
 * PNG in plain TypeScript over the runtime's native zlib (DecompressionStream/CompressionStream). Rows are
 * unfiltered as they are inflated, straight into the RGBA result, so a decode holds the input and one RGBA
 * buffer and nothing else; a WASM codec would also keep its own grown memory for the life of the isolate.
 * Reads every PNG colour type and bit depth (16-bit is reduced to 8), palettes, tRNS and Adam7 interlacing.
 *
 * Decoded size is bounded before any work: the header's pixel count is checked against the cap before the
 * RGBA buffer exists, and the compressed data goes through the engine's and the Worker's one bounded inflate
 * (@p6/contract/png-data): fed to zlib in small slices while the inflated bytes are counted against what the
 * header implies (rows × (1 filter byte + row bytes), per Adam7 pass). A stream that inflates past that (a
 * "zip bomb": 1 MB of zeros inflating to 1 GiB behind a 1×1 header) is refused after at most one slice's worth
 * of output, never held.
 */

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
const CHANNELS = PNG_CHANNELS;
const DEPTHS: Record<number, number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};
type Pass = ReturnType<typeof pngPasses>[number];
type Ihdr = { width: number; height: number; depth: number; colorType: number; interlaced: boolean };

export class PngFormatError extends Error {}

function u32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

function type4(b: Uint8Array, o: number): string {
  return String.fromCharCode(b[o]!, b[o + 1]!, b[o + 2]!, b[o + 3]!);
}

/** Decodes to RGBA; refuses (DecodeLimitError) more than `maxPixels` or image data beyond the header's size. */
export async function decodePng(bytes: Uint8Array, maxPixels = MAX_IMAGE_PIXELS): Promise<Rgba> {
  if (bytes.length < 8 || SIGNATURE.some((v, i) => bytes[i] !== v)) throw new PngFormatError("not a PNG");
  let ihdr: Ihdr | undefined;
  let palette: Uint8Array | undefined;
  let trns: Uint8Array | undefined;
  const idat: Uint8Array[] = [];
  let o = 8;
  for (;;) {
    if (o + 12 > bytes.length) throw new PngFormatError("truncated PNG");
    const length = u32(bytes, o);
    const type = type4(bytes, o + 4);
    const data = bytes.subarray(o + 8, o + 8 + length);
    if (data.length !== length || o + 12 + length > bytes.length) throw new PngFormatError("truncated PNG");
    o += 12 + length;
    if (type === "IHDR") ihdr = parseIhdr(data);
    else if (type === "PLTE") palette = data;
    else if (type === "tRNS") trns = data;
    else if (type === "IDAT") idat.push(data);
    else if (type === "IEND") break;
  }
  if (!ihdr || idat.length === 0) throw new PngFormatError("PNG without image data");
  if (ihdr.colorType === 3 && !palette) throw new PngFormatError("palette PNG without PLTE");

  const { width, height } = ihdr;
  checkPixels(width, height, maxPixels);
  const out = new Uint8ClampedArray(width * height * 4);
  const rows = rowDecoder(ihdr, out, palette, trns);
  await inflate(idat, rows.expectedBytes, rows.push);
  if (!rows.done()) throw new PngFormatError("truncated PNG image data");
  return { data: out, width, height };
}

function parseIhdr(d: Uint8Array): Ihdr {
  const ihdr = {
    width: u32(d, 0),
    height: u32(d, 4),
    depth: d[8]!,
    colorType: d[9]!,
    interlaced: d[12] === 1,
  };
  if (d.length !== 13 || !DEPTHS[ihdr.colorType]?.includes(ihdr.depth) || d[10] !== 0 || d[11] !== 0)
    throw new PngFormatError("unsupported PNG header");
  if (ihdr.width === 0 || ihdr.height === 0) throw new PngFormatError("empty PNG");
  return ihdr;
}

/** Refuses a decoded size beyond `maxPixels` before anything is allocated for it. */
export function checkPixels(width: number, height: number, maxPixels: number): void {
  const pixels = width * height;
  if (pixels > maxPixels)
    throw new DecodeLimitError(
      "REQUEST_BODY_TOO_LARGE",
      `is ${width}×${height} (${(pixels / 1e6).toFixed(1)} megapixels); the limit is ${maxPixels / 1e6} megapixels.`,
    );
}

/**
 * The shared bounded inflate (@p6/contract/png-data): each inflated piece to `sink` as it arrives, stopped (the
 * stream cancelled, so nothing more is inflated) as soon as the output exceeds `expected` bytes, which is a
 * malformed image (415). The compressed data goes in 8 KiB slices, so at most ~8 MiB is inflated past it.
 */
export async function inflate(
  chunks: Iterable<Uint8Array>,
  expected: number,
  sink: (piece: Uint8Array) => void,
): Promise<void> {
  try {
    await inflateBounded(chunks, expected, sink);
  } catch (error) {
    if (error instanceof InflateLimitError)
      throw new DecodeLimitError("CONTENT_TYPE_UNSUPPORTED", `${inflationMessage(expected)}.`);
    throw error;
  }
}
/**
 * Turns the inflated byte stream into RGBA pixels, one scanline at a time: reassembles rows across pieces,
 * undoes the row filter against the previous row, and expands the pixels into `out`.
 */
function rowDecoder(h: Ihdr, out: Uint8ClampedArray, palette?: Uint8Array, trns?: Uint8Array) {
  const channels = CHANNELS[h.colorType]!;
  const bitsPerPixel = channels * h.depth;
  const bpp = Math.max(1, bitsPerPixel >> 3);
  const passes: Pass[] = pngPasses(h);
  const rowBytesOf = (p: Pass) => pngRowBytes(h, p);
  const maxRow = Math.ceil((h.width * bitsPerPixel) / 8);
  // Rows carry `bpp` leading zero bytes so the filters can read "the pixel to the left" without a branch.
  let cur = new Uint8Array(bpp + maxRow);
  let prev = new Uint8Array(bpp + maxRow);
  const expand = expander(h, out, palette, trns);

  let passIndex = 0;
  let pass = passes[0]!;
  let rowBytes = rowBytesOf(pass);
  let row = 0;
  let filled = -1; // -1: the next byte is the row's filter type
  let filter = 0;

  function push(piece: Uint8Array) {
    let i = 0;
    while (i < piece.length && passIndex < passes.length) {
      if (filled < 0) {
        filter = piece[i++]!;
        filled = 0;
        continue;
      }
      const n = Math.min(rowBytes - filled, piece.length - i);
      cur.set(piece.subarray(i, i + n), bpp + filled);
      i += n;
      filled += n;
      if (filled < rowBytes) continue;
      unfilter(filter, cur, prev, bpp, rowBytes);
      expand(pass, row, cur, bpp);
      [cur, prev] = [prev, cur];
      filled = -1;
      if (++row === pass.h) {
        row = 0;
        pass = passes[++passIndex]!;
        if (pass) {
          rowBytes = rowBytesOf(pass);
          prev.fill(0);
        }
      }
    }
  }
  const expectedBytes = pngDataBytes(h);
  return { push, done: () => passIndex === passes.length, expectedBytes };
}

function unfilter(filter: number, cur: Uint8Array, prev: Uint8Array, bpp: number, rowBytes: number): void {
  const end = bpp + rowBytes;
  switch (filter) {
    case 0:
      return;
    case 1:
      for (let i = bpp; i < end; i++) cur[i] = cur[i]! + cur[i - bpp]!;
      return;
    case 2:
      for (let i = bpp; i < end; i++) cur[i] = cur[i]! + prev[i]!;
      return;
    case 3:
      for (let i = bpp; i < end; i++) cur[i] = cur[i]! + ((cur[i - bpp]! + prev[i]!) >> 1);
      return;
    case 4:
      for (let i = bpp; i < end; i++) cur[i] = cur[i]! + paeth(cur[i - bpp]!, prev[i]!, prev[i - bpp]!);
      return;
    default:
      throw new PngFormatError(`invalid PNG row filter ${filter}`);
  }
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Returns the function that writes one unfiltered row of a pass into the RGBA output. */
function expander(h: Ihdr, out: Uint8ClampedArray, palette?: Uint8Array, trns?: Uint8Array) {
  const { width, depth, colorType } = h;
  const channels = CHANNELS[colorType]!;
  const step = depth === 16 ? 2 : 1; // bytes per sample when depth ≥ 8; 16-bit keeps the high byte
  const maxSample = (1 << Math.min(depth, 8)) - 1;
  const trnsKey = trns && (colorType === 0 || colorType === 2) ? readTrnsKey(trns, colorType) : undefined;
  const paletteAlpha = colorType === 3 ? trns : undefined;

  return (pass: Pass, row: number, line: Uint8Array, offset: number) => {
    const y = pass.y0 + row * pass.dy;
    let o = (y * width + pass.x0) * 4;
    const oStep = pass.dx * 4;
    if (depth === 8 && colorType === 6 && pass.dx === 1) {
      out.set(line.subarray(offset, offset + width * 4), o);
      return;
    }
    for (let x = 0; x < pass.w; x++, o += oStep) {
      if (depth < 8) {
        const bit = x * depth;
        const v = (line[offset + (bit >> 3)]! >> (8 - depth - (bit & 7))) & maxSample;
        if (colorType === 3) {
          writePalette(out, o, palette!, paletteAlpha, v);
        } else {
          const g = Math.round((v * 255) / maxSample);
          out[o] = out[o + 1] = out[o + 2] = g;
          out[o + 3] = trnsKey && trnsKey[0] === v ? 0 : 255;
        }
        continue;
      }
      const s = offset + x * channels * step;
      const key = trnsKey && depth === 16 ? sample16(line, s, channels) : undefined;
      switch (colorType) {
        case 0: {
          out[o] = out[o + 1] = out[o + 2] = line[s]!;
          out[o + 3] = trnsKey && (key ? key[0] : line[s]) === trnsKey[0] ? 0 : 255;
          break;
        }
        case 2: {
          const r = line[s]!;
          const g = line[s + step]!;
          const b = line[s + 2 * step]!;
          out[o] = r;
          out[o + 1] = g;
          out[o + 2] = b;
          const k = key ?? [r, g, b];
          out[o + 3] = trnsKey && k[0] === trnsKey[0] && k[1] === trnsKey[1] && k[2] === trnsKey[2] ? 0 : 255;
          break;
        }
        case 3:
          writePalette(out, o, palette!, paletteAlpha, line[s]!);
          break;
        case 4:
          out[o] = out[o + 1] = out[o + 2] = line[s]!;
          out[o + 3] = line[s + step]!;
          break;
        default:
          out[o] = line[s]!;
          out[o + 1] = line[s + step]!;
          out[o + 2] = line[s + 2 * step]!;
          out[o + 3] = line[s + 3 * step]!;
      }
    }
  };
}

/** The full-precision sample values of one 16-bit pixel, compared with a 16-bit tRNS key. */
function sample16(line: Uint8Array, s: number, channels: number): number[] {
  const key: number[] = [];
  for (let c = 0; c < Math.min(channels, 3); c++) key.push((line[s + 2 * c]! << 8) | line[s + 2 * c + 1]!);
  return key;
}

function readTrnsKey(trns: Uint8Array, colorType: number): number[] {
  const n = colorType === 0 ? 1 : 3;
  const key: number[] = [];
  for (let c = 0; c < n; c++) key.push((trns[2 * c]! << 8) | trns[2 * c + 1]!);
  return key;
}

function writePalette(
  out: Uint8ClampedArray,
  o: number,
  palette: Uint8Array,
  alpha: Uint8Array | undefined,
  index: number,
): void {
  const p = index * 3;
  if (p + 2 >= palette.length) throw new PngFormatError("PNG palette index out of range");
  out[o] = palette[p]!;
  out[o + 1] = palette[p + 1]!;
  out[o + 2] = palette[p + 2]!;
  out[o + 3] = alpha && index < alpha.length ? alpha[index]! : 255;
}

/**
 * Encodes RGBA (or RGB when every pixel is opaque) with the Paeth filter on every row and native deflate,
 * in batches of rows, so only the compressed output accumulates.
 */
export async function encodePng(image: Rgba): Promise<Uint8Array> {
  const { data, width, height } = image;
  const opaque = isOpaque(data);
  const channels = opaque ? 3 : 4;
  const rowBytes = width * channels;
  const stream = new CompressionStream("deflate");
  const writer = stream.writable.getWriter();
  const feeding = (async () => {
    const rowsPerBatch = Math.max(1, Math.floor((256 * 1024) / (rowBytes + 1)));
    let prev = new Uint8Array(rowBytes + channels);
    let cur = new Uint8Array(rowBytes + channels);
    for (let y = 0; y < height; y += rowsPerBatch) {
      const rows = Math.min(rowsPerBatch, height - y);
      // A fresh batch per write: the stream may still read a chunk after write() resolves.
      const batch = new Uint8Array(rows * (rowBytes + 1));
      for (let r = 0; r < rows; r++) {
        copyRow(data, (y + r) * width * 4, width, channels, cur);
        filterPaeth(cur, prev, channels, batch, r * (rowBytes + 1));
        [cur, prev] = [prev, cur];
      }
      await writer.write(batch);
    }
    await writer.close();
  })();
  feeding.catch(() => {});
  const compressed: Uint8Array[] = [];
  let total = 0;
  const reader = stream.readable.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    compressed.push(value);
    total += value.length;
  }
  await feeding;
  return assemble(width, height, opaque ? 2 : 6, compressed, total);
}

function isOpaque(data: Uint8ClampedArray): boolean {
  for (let i = 3; i < data.length; i += 4) if (data[i] !== 255) return false;
  return true;
}

/** Copies one RGBA row into `dst` after `channels` leading zero bytes, dropping alpha when channels is 3. */
function copyRow(src: Uint8ClampedArray, start: number, width: number, channels: number, dst: Uint8Array) {
  if (channels === 4) {
    dst.set(src.subarray(start, start + width * 4), 4);
    return;
  }
  for (let x = 0, s = start, d = 3; x < width; x++, s += 4, d += 3) {
    dst[d] = src[s]!;
    dst[d + 1] = src[s + 1]!;
    dst[d + 2] = src[s + 2]!;
  }
}

function filterPaeth(cur: Uint8Array, prev: Uint8Array, bpp: number, out: Uint8Array, at: number): void {
  out[at] = 4;
  for (let i = bpp, o = at + 1; i < cur.length; i++, o++)
    out[o] = cur[i]! - paeth(cur[i - bpp]!, prev[i]!, prev[i - bpp]!);
}

function assemble(width: number, height: number, colorType: number, idat: Uint8Array[], total: number) {
  const out = new Uint8Array(8 + 25 + 12 + total + 12);
  const view = new DataView(out.buffer);
  out.set(SIGNATURE, 0);
  let o = 8;
  const chunk = (type: string, parts: Uint8Array[], length: number) => {
    view.setUint32(o, length);
    for (let i = 0; i < 4; i++) out[o + 4 + i] = type.charCodeAt(i);
    let p = o + 8;
    for (const part of parts) {
      out.set(part, p);
      p += part.length;
    }
    view.setUint32(p, crc32(out.subarray(o + 4, p)));
    o = p + 4;
  };
  const ihdr = new Uint8Array(13);
  const ihdrView = new DataView(ihdr.buffer);
  ihdrView.setUint32(0, width);
  ihdrView.setUint32(4, height);
  ihdr[8] = 8;
  ihdr[9] = colorType;
  chunk("IHDR", [ihdr], 13);
  chunk("IDAT", idat, total);
  chunk("IEND", [], 0);
  return out;
}
