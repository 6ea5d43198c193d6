/// <reference path="./fontkit.d.ts" />
/**
 * The colour emoji pack for text watermarks (src/text/emoji.ts, docs/text-rendering.md): every picture of
 * Debian's NotoColorEmoji.ttf (CBDT/CBLC, 136 px PNGs at 109 ppem) as one file, keyed by the emoji's code
 * points, so the Worker reads one picture by an R2 range read and needs neither the font nor a shaper.
 *
 * The sequences come from the font itself: its cmap (single code points) and the ligatures of its GSUB
 * (ZWJ sequences, flags, keycaps, skin tones, tag flags), their component glyphs mapped back to code points.
 * fontkit parses the tables; its `layout()` cannot shape this font (it has no outlines: glyphs are null), so
 * the ligatures are read, not applied, and the PNGs are cut out of CBDT by hand.
 *
 * Layout: u32 BE length of the JSON index, the index, then the PNGs. Index:
 * { ppem, unitsPerEm, pictures: { "<hex>-<hex>…": [offset, length, width, height, bearingX, bearingY, advance] } }
 * with offsets from the end of the index and metrics in pixels at `ppem`. U+FE0F is left out of keys (the
 * font maps it to no glyph; the Worker drops it before looking up).
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as fontkit from "fontkit";
import { EMOJI_FONT_PATH, EMOJI_PACK_KEY, EMOJI_PACKAGE } from "../../src/text/remote-fonts.ts";

type Picture = [number, number, number, number, number, number, number];

export function buildEmojiPack(fontPath: string): { pack: Buffer; count: number } {
  const file = readFileSync(fontPath);
  // biome-ignore lint/suspicious/noExplicitAny: fontkit's parsed tables are untyped
  const font = fontkit.create(file) as any;
  const cbdt: number = font.directory.tables.CBDT.offset;
  const cblc: number = font.directory.tables.CBLC.offset;
  // fontkit's CBLC reads only the first index subtable, so CBLC is read here too: the first strike.
  const arrayOffset = cblc + file.readUInt32BE(cblc + 8);
  const subtables = file.readUInt32BE(cblc + 16);
  const ppem = file.readUInt8(cblc + 8 + 45);

  // glyph id → PNG location and metrics (image format 17: small metrics, then a length and the PNG).
  const images = new Map<number, { start: number; length: number; metrics: number[] }>();
  for (let i = 0; i < subtables; i++) {
    const first = file.readUInt16BE(arrayOffset + 8 * i);
    const last = file.readUInt16BE(arrayOffset + 8 * i + 2);
    const table = arrayOffset + file.readUInt32BE(arrayOffset + 8 * i + 4);
    const indexFormat = file.readUInt16BE(table);
    const imageFormat = file.readUInt16BE(table + 2);
    const imageData = cbdt + file.readUInt32BE(table + 4);
    if (imageFormat !== 17 || (indexFormat !== 1 && indexFormat !== 3))
      throw new Error(`CBLC index format ${indexFormat} / CBDT image format ${imageFormat} is not read`);
    const offsetAt = (n: number) =>
      indexFormat === 1 ? file.readUInt32BE(table + 8 + 4 * n) : file.readUInt16BE(table + 8 + 2 * n);
    for (let glyph = first; glyph <= last; glyph++) {
      const at = imageData + offsetAt(glyph - first);
      if (imageData + offsetAt(glyph - first + 1) === at) continue;
      // smallGlyphMetrics: height, width, bearingX, bearingY, advance.
      const metrics = [
        file.readUInt8(at + 1),
        file.readUInt8(at),
        file.readInt8(at + 2),
        file.readInt8(at + 3),
      ];
      const length = file.readUInt32BE(at + 5);
      images.set(glyph, { start: at + 9, length, metrics: [...metrics, file.readUInt8(at + 4)] });
    }
  }

  // glyph id → code point for the glyphs the cmap reaches, and every sequence → glyph.
  const sequences = new Map<string, number>();
  const codePointOf = new Map<number, number>();
  for (const codePoint of font.characterSet as number[]) {
    const glyph: number = font._cmapProcessor.lookup(codePoint);
    if (!glyph) continue;
    if (!codePointOf.has(glyph)) codePointOf.set(glyph, codePoint);
    sequences.set(key([codePoint]), glyph);
  }
  let unmapped = 0;
  for (const lookup of font.GSUB.lookupList.toArray()) {
    if (lookup.lookupType !== 4) continue;
    for (const table of lookup.subTables) {
      const firsts = coverageGlyphs(table.coverage);
      list(table.ligatureSets).forEach((set, i: number) => {
        for (const ligature of list(set) as { glyph: number; components: number[] }[]) {
          const glyphs = [firsts[i]!, ...ligature.components];
          const codePoints = glyphs.map((glyph) => codePointOf.get(glyph));
          if (codePoints.some((c) => c === undefined)) unmapped++;
          else if (!sequences.has(key(codePoints as number[])))
            sequences.set(key(codePoints as number[]), ligature.glyph);
        }
      });
    }
  }

  const index: Record<string, Picture> = {};
  const chunks: Buffer[] = [];
  const placed = new Map<number, [number, number]>();
  let offset = 0;
  for (const [name, glyph] of sequences) {
    const image = images.get(glyph);
    if (!image) continue;
    let at = placed.get(glyph);
    if (!at) {
      at = [offset, image.length];
      chunks.push(file.subarray(image.start, image.start + image.length));
      offset += image.length;
      placed.set(glyph, at);
    }
    index[name] = [...at, ...image.metrics] as Picture;
  }
  const json = Buffer.from(JSON.stringify({ ppem, unitsPerEm: font.unitsPerEm, pictures: index }));
  const header = Buffer.alloc(4);
  header.writeUInt32BE(json.length);
  if (unmapped > 0) console.warn(`emoji pack: ${unmapped} ligatures of intermediate glyphs left out`);
  return { pack: Buffer.concat([header, json, ...chunks]), count: Object.keys(index).length };
}

/** fontkit gives arrays or lazy arrays (with `toArray`). */
function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : (value as { toArray(): unknown[] }).toArray();
}

function key(codePoints: number[]): string {
  return codePoints
    .filter((c) => c !== 0xfe0f)
    .map((c) => c.toString(16))
    .join("-");
}

function coverageGlyphs(coverage: {
  version: number;
  glyphs?: number[];
  rangeRecords?: { start: number; end: number }[];
}): number[] {
  if (coverage.version === 1) return coverage.glyphs!;
  return coverage.rangeRecords!.flatMap((r) =>
    Array.from({ length: r.end - r.start + 1 }, (_, i) => r.start + i),
  );
}

/**
 * The pack as a file for `wrangler r2 object put` (npm run dev / deploy), rebuilt only when the font is newer;
 * undefined, with a warning, when Debian's font is not installed (emoji in text marks then answer 503).
 */
export function emojiPackFile(): { key: string; path: string } | undefined {
  if (!existsSync(EMOJI_FONT_PATH)) {
    console.warn(
      `${EMOJI_FONT_PATH} is missing (apt-get install ${EMOJI_PACKAGE}): emoji in text marks will fail.`,
    );
    return undefined;
  }
  const file = path.resolve(import.meta.dirname, "../../.wrangler/emoji", EMOJI_PACK_KEY);
  if (!existsSync(file) || statSync(file).mtimeMs < statSync(EMOJI_FONT_PATH).mtimeMs) {
    const { pack, count } = buildEmojiPack(EMOJI_FONT_PATH);
    mkdirSync(path.dirname(file), { recursive: true });
    // Whole or not at all: several `npm run dev` of one checkout (the browser tests') may build it at once,
    // and one reading a part would put it into its FONTS bucket.
    const partial = `${file}.${process.pid}-${randomBytes(4).toString("hex")}.partial`;
    writeFileSync(partial, pack);
    renameSync(partial, file);
    console.log(`Built ${EMOJI_PACK_KEY}: ${count} emoji, ${(pack.length / 1e6).toFixed(1)} MB.`);
  }
  return { key: EMOJI_PACK_KEY, path: file };
}
