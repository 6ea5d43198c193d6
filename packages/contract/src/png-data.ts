/**
 * How much image data a PNG may inflate to, and the bounded inflate that holds it to that: one check for the
 * Worker (src/images/png.ts decodes through it) and the engine (containers/ffmpeg/src/security/png-data.ts
 * checks every PNG source and logo with it before ffmpeg reads one).
 *
 * A PNG's header fixes its image data exactly: rows × (1 filter byte + row bytes), per Adam7 pass. A zlib stream
 * that inflates past that is a decompression bomb behind an honest header (a 1×1 image whose 1 MB IDAT inflates
 * to 1 GiB); it is stopped after at most one slice's worth of output, never held, and the image is refused as
 * malformed (415). Inflating is the runtime's own zlib through DecompressionStream("deflate") (the zlib format
 * PNG uses), which Node 22 and workerd both have: no library, and node:zlib is not in the Worker.
 */

/** The fields of IHDR the data size depends on. */
export type PngLayout = {
  width: number;
  height: number;
  /** Bits per sample: 1, 2, 4, 8 or 16. */
  depth: number;
  /** 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA. */
  colorType: number;
  interlaced: boolean;
};

/** Samples per pixel of each colour type. */
export const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** Adam7's passes: [x0, y0, dx, dy]. */
export const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

export type PngPass = { x0: number; y0: number; dx: number; dy: number; w: number; h: number };

/** The passes a PNG's rows come in: one for a plain image, the non-empty Adam7 ones for an interlaced one. */
export function pngPasses(layout: PngLayout): PngPass[] {
  if (!layout.interlaced) return [{ x0: 0, y0: 0, dx: 1, dy: 1, w: layout.width, h: layout.height }];
  return ADAM7.map(([x0, y0, dx, dy]) => ({
    x0,
    y0,
    dx,
    dy,
    w: Math.ceil((layout.width - x0) / dx),
    h: Math.ceil((layout.height - y0) / dy),
  })).filter((p) => p.w > 0 && p.h > 0);
}

/** Bytes of one row of `pass`, without its filter byte. */
export function pngRowBytes(layout: PngLayout, pass: Pick<PngPass, "w">): number {
  return Math.ceil((pass.w * (PNG_CHANNELS[layout.colorType] ?? 4) * layout.depth) / 8);
}

/** Bytes the image data of a PNG with this header inflates to, exactly. */
export function pngDataBytes(layout: PngLayout): number {
  return pngPasses(layout).reduce((sum, pass) => sum + pass.h * (1 + pngRowBytes(layout, pass)), 0);
}

/** The public reason for refusing a PNG whose data inflates past its header; it follows the image's name. */
export function inflationMessage(expected: number): string {
  return `is malformed: its compressed image data inflates beyond the ${expected} bytes its header declares`;
}

/** The zlib data inflated past `expected` bytes: what `inflateBounded` throws. */
export class InflateLimitError extends Error {
  override readonly name = "InflateLimitError";
  readonly expected: number;

  constructor(expected: number) {
    super(inflationMessage(expected));
    this.expected = expected;
  }
}

/**
 * Compressed bytes handed to zlib per write. Deflate expands at most ~1032:1, so one slice inflates to at most
 * ~8 MiB before the count can stop it.
 */
export const INFLATE_SLICE_BYTES = 8 * 1024;

/**
 * Inflates the zlib stream in `chunks` (read lazily, INFLATE_SLICE_BYTES at a time), handing each inflated piece
 * to `sink`, and stops (cancelling the stream, so nothing more is inflated or read) as soon as the output
 * exceeds `expected` bytes: InflateLimitError. A stream zlib cannot read rejects with zlib's error. Returns the
 * bytes inflated.
 */
export async function inflateBounded(
  chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  expected: number,
  sink: (piece: Uint8Array) => void = () => {},
): Promise<number> {
  const stream = new DecompressionStream("deflate");
  const writer = stream.writable.getWriter();
  let stopped = false;
  const feeding = (async () => {
    for await (const chunk of chunks) {
      for (let at = 0; at < chunk.length; at += INFLATE_SLICE_BYTES) {
        if (stopped) return;
        // Never a SharedArrayBuffer here: the file's bytes or a fetched body's.
        await writer.write(chunk.subarray(at, at + INFLATE_SLICE_BYTES) as Uint8Array<ArrayBuffer>);
      }
    }
    await writer.close();
  })();
  feeding.catch(() => {}); // the reader below reports the same failure, or has cancelled the stream
  const reader = stream.readable.getReader();
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > expected) {
      stopped = true;
      await reader.cancel().catch(() => {});
      await writer.abort().catch(() => {});
      throw new InflateLimitError(expected);
    }
    sink(value);
  }
  await feeding;
  return total;
}

const ascii = (b: Uint8Array, o: number, n: number) => String.fromCharCode(...b.subarray(o, o + n));
const u32 = (b: Uint8Array, o: number) =>
  ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;

/** How much of a file `checkPngData` reads at once. */
const READ_BYTES = 64 * 1024;

export type PngDataCheck =
  /** The image data inflates to no more than the header needs (or the file is not a PNG this can read). */
  | { ok: true }
  /** It inflates past `expected` bytes: refuse the image with `inflationMessage(expected)`. */
  | { ok: false; expected: number };

/**
 * Walks a PNG's chunks through `read` (bytes at an offset, fewer at the end of the file) and inflates its IDAT
 * data against what IHDR implies, without holding more than a slice of either. Only the excess is judged here:
 * a truncated, corrupt or non-PNG file passes, and is the decoder's to refuse.
 */
export async function checkPngData(
  read: (offset: number, length: number) => Promise<Uint8Array>,
): Promise<PngDataCheck> {
  const head = await read(0, 33);
  if (head.length < 33 || ascii(head, 12, 4) !== "IHDR") return { ok: true };
  const layout: PngLayout = {
    width: u32(head, 16),
    height: u32(head, 20),
    depth: head[24]!,
    colorType: head[25]!,
    interlaced: head[28] === 1,
  };
  if (!(layout.colorType in PNG_CHANNELS) || layout.width === 0 || layout.height === 0) return { ok: true };
  const expected = pngDataBytes(layout);

  // The IDAT payloads in file order, read as zlib asks for them.
  async function* idat(): AsyncGenerator<Uint8Array> {
    for (let offset = 33, chunks = 0; chunks < 1_000_000; chunks++) {
      const header = await read(offset, 8);
      if (header.length < 8) return;
      const length = u32(header, 0);
      const type = ascii(header, 4, 4);
      if (type === "IEND") return;
      if (type === "IDAT") {
        for (let at = 0; at < length; at += READ_BYTES) {
          const piece = await read(offset + 8 + at, Math.min(READ_BYTES, length - at));
          if (piece.length === 0) return;
          yield piece;
        }
      }
      offset += 12 + length;
    }
  }

  try {
    await inflateBounded(idat(), expected);
  } catch (error) {
    if (error instanceof InflateLimitError) return { ok: false, expected };
    // zlib could not read the data: not this check's to judge.
  }
  return { ok: true };
}
