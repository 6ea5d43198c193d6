/**
 * The `text_mark` a job with `params.text` needs (the Worker draws text marks, issue 17; the engine only
 * overlays them). Engine tests test the overlay, not text drawing, so the stand-in "mark" is a block of the
 * params' colour and opacity about as large as the text would be (0.6 em per character, 1 em tall).
 */
import { deflateSync } from "node:zlib";

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (bytes: Buffer) => {
  let c = 0xffffffff;
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
/** A PNG chunk: length, type, data, CRC. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const out = Buffer.alloc(body.length + 8);
  out.writeUInt32BE(data.length, 0);
  body.copy(out, 4);
  out.writeUInt32BE(crc32(body), body.length + 4);
  return out;
}

/** An RGBA PNG of `width`×`height`, every pixel `rgba`. */
export function solidPng(width: number, height: number, rgba: [number, number, number, number]): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const row = Buffer.alloc(1 + width * 4);
  for (let x = 0; x < width; x++) row.set(rgba, 1 + x * 4);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", deflateSync(raw)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The text_mark for `params` (undefined without text): drawn at font_size, or at 20 px to be scaled. */
export function textMarkFor(params: unknown): { png: string; font_size: number } | undefined {
  if (typeof params !== "object" || params === null) return undefined;
  const p = params as Record<string, unknown>;
  if (typeof p.text !== "string" || p.text.length === 0) return undefined;
  const size = typeof p.font_size === "number" && p.font_size >= 1 && p.font_size <= 1000 ? p.font_size : 20;
  const hex =
    typeof p.color === "string" && /^#[0-9a-fA-F]{6,8}$/.test(p.color) ? p.color.slice(1) : "FFFFFF";
  const channel = (i: number) => Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  const opacity = typeof p.opacity === "number" ? Math.min(1, Math.max(0, p.opacity)) : 0.5;
  const alpha = Math.round((hex.length === 8 ? channel(3) : 255) * opacity);
  const lines = p.text.split("\n");
  const width = Math.max(1, Math.round(0.6 * size * Math.max(...lines.map((l) => [...l].length))));
  const png = solidPng(width, Math.max(1, Math.round(size * lines.length)), [
    channel(0),
    channel(1),
    channel(2),
    alpha,
  ]);
  return { png: png.toString("base64"), font_size: size };
}

/** `body` with the text_mark the Worker would have sent, unless the test set its own (or none: null). */
export function withTextMark<T extends object>(body: T): T {
  const fields = body as Record<string, unknown>;
  if ("text_mark" in fields)
    return (fields.text_mark === null ? { ...body, text_mark: undefined } : body) as T;
  const mark = textMarkFor(fields.params);
  return mark ? { ...body, text_mark: mark } : body;
}
