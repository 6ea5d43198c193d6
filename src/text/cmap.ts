/**
 * Which characters a font has: its `cmap` table, read in place (no copy, no full parse). Only the two
 * Unicode subtable formats every modern font carries are read: 12 (full Unicode, groups) and 4 (BMP,
 * segments). A TrueType collection (.ttc) is read through one of its faces.
 *
 * Hand-written because what npm offers parses far more than this: opentype.js and fontkit decode every
 * table (glyph outlines, layout) on load, which for the 19.5 MB CJK collection costs hundreds of ms and
 * adds ~150–250 KB gzip to the Worker, to answer "is code point X mapped to a glyph?".
 */
export type Coverage = {
  has(codePoint: number): boolean;
  /** The nominal glyph of a code point (0 when unmapped). */
  glyph(codePoint: number): number;
  /** A glyph's advance (hmtx) in em, 0 when the font has no hmtx. */
  advance(glyph: number): number;
};

export function readCoverage(font: Uint8Array, faceIndex = 0): Coverage {
  const view = new DataView(font.buffer, font.byteOffset, font.byteLength);
  let face = 0;
  if (view.getUint32(0) === 0x74746366 /* 'ttcf' */) {
    const faces = view.getUint32(8);
    if (faceIndex >= faces) throw new Error(`font collection has ${faces} faces, not ${faceIndex + 1}`);
    face = view.getUint32(12 + 4 * faceIndex);
  }
  const tables = view.getUint16(face + 4);
  const table = (tag: number): number => {
    for (let i = 0; i < tables; i++) {
      const record = face + 12 + 16 * i;
      if (view.getUint32(record) === tag) return view.getUint32(record + 8);
    }
    return -1;
  };
  const cmap = table(0x636d6170 /* 'cmap' */);
  if (cmap < 0) throw new Error("font has no cmap table");
  const glyph = readCmap(view, cmap);
  const advance = readAdvances(
    view,
    table(0x68656164 /* 'head' */),
    table(0x68686561 /* 'hhea' */),
    table(0x686d7478 /* 'hmtx' */),
  );
  return { has: (codePoint) => glyph(codePoint) !== 0, glyph, advance };
}

/** hmtx advances in em: the last long metric repeats for the glyphs after it. */
function readAdvances(view: DataView, head: number, hhea: number, hmtx: number): (glyph: number) => number {
  if (head < 0 || hhea < 0 || hmtx < 0) return () => 0;
  const unitsPerEm = view.getUint16(head + 18);
  const metrics = view.getUint16(hhea + 34);
  if (metrics === 0 || unitsPerEm === 0) return () => 0;
  return (glyph) => view.getUint16(hmtx + 4 * Math.min(glyph, metrics - 1)) / unitsPerEm;
}

function readCmap(view: DataView, cmap: number): (codePoint: number) => number {
  // Prefer a full-Unicode subtable (format 12), else a BMP one (format 4); Unicode or Windows platform.
  let best: { offset: number; format: number } | undefined;
  const subtables = view.getUint16(cmap + 2);
  for (let i = 0; i < subtables; i++) {
    const platform = view.getUint16(cmap + 4 + 8 * i);
    const encoding = view.getUint16(cmap + 6 + 8 * i);
    const offset = cmap + view.getUint32(cmap + 8 + 8 * i);
    const unicode = platform === 0 || (platform === 3 && (encoding === 1 || encoding === 10));
    if (!unicode) continue;
    const format = view.getUint16(offset);
    if (format === 12 && best?.format !== 12) best = { offset, format };
    else if (format === 4 && !best) best = { offset, format };
  }
  if (!best) throw new Error("font has no Unicode cmap subtable of format 4 or 12");
  return best.format === 12 ? format12(view, best.offset) : format4(view, best.offset);
}

function format12(view: DataView, offset: number): (codePoint: number) => number {
  const groups = view.getUint32(offset + 12);
  const first = offset + 16;
  return (codePoint) => {
    let low = 0;
    let high = groups - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const group = first + 12 * middle;
      if (codePoint < view.getUint32(group)) high = middle - 1;
      else if (codePoint > view.getUint32(group + 4)) low = middle + 1;
      else return view.getUint32(group + 8) + (codePoint - view.getUint32(group));
    }
    return 0;
  };
}

function format4(view: DataView, offset: number): (codePoint: number) => number {
  const segments = view.getUint16(offset + 6) / 2;
  const ends = offset + 14;
  const starts = ends + 2 * segments + 2;
  const deltas = starts + 2 * segments;
  const rangeOffsets = deltas + 2 * segments;
  return (codePoint) => {
    if (codePoint > 0xffff) return 0;
    let low = 0;
    let high = segments - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (view.getUint16(ends + 2 * middle) < codePoint) low = middle + 1;
      else high = middle;
    }
    const start = view.getUint16(starts + 2 * low);
    if (codePoint < start || codePoint > view.getUint16(ends + 2 * low)) return 0;
    const delta = view.getUint16(deltas + 2 * low);
    const rangeOffset = view.getUint16(rangeOffsets + 2 * low);
    if (rangeOffset === 0) return (codePoint + delta) & 0xffff;
    const at = rangeOffsets + 2 * low + rangeOffset + 2 * (codePoint - start);
    const glyph = view.getUint16(at);
    return glyph === 0 ? 0 : (glyph + delta) & 0xffff;
  };
}
