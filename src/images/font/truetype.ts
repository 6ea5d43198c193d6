/**
 * The parts of a TrueType font that drawing a line of text needs: character → glyph (cmap 4 and 12), advance
 * widths (hmtx), pair kerning (kern format 0), vertical metrics (hhea) and quadratic outlines (glyf/loca,
 * composite glyphs included). Everything is read lazily from the font bytes; nothing is copied.
 * Hinting, GSUB ligatures and GPOS are out of scope: the mark is drawn large and anti-aliased.
 */

export type OutlinePoint = { x: number; y: number; onCurve: boolean };
/** Closed contours in font units, y pointing up. */
export type Outline = OutlinePoint[][];

type Transform = [a: number, b: number, c: number, d: number, e: number, f: number];
const IDENTITY: Transform = [1, 0, 0, 1, 0, 0];

export class TrueTypeFont {
  readonly unitsPerEm: number;
  readonly ascender: number;
  readonly descender: number;
  readonly lineGap: number;
  private readonly view: DataView;
  private readonly tables = new Map<string, number>();
  private readonly numberOfHMetrics: number;
  private readonly longLoca: boolean;
  private readonly cmap: { format: number; offset: number };
  private readonly kernPairs: { offset: number; count: number } | undefined;

  constructor(bytes: ArrayBuffer) {
    const v = new DataView(bytes);
    this.view = v;
    const numTables = v.getUint16(4);
    for (let i = 0; i < numTables; i++) {
      const record = 12 + 16 * i;
      const tag = String.fromCharCode(...new Uint8Array(bytes, record, 4));
      this.tables.set(tag, v.getUint32(record + 8));
    }
    const head = this.table("head");
    const hhea = this.table("hhea");
    this.unitsPerEm = v.getUint16(head + 18);
    this.longLoca = v.getInt16(head + 50) === 1;
    this.ascender = v.getInt16(hhea + 4);
    this.descender = v.getInt16(hhea + 6);
    this.lineGap = v.getInt16(hhea + 8);
    this.numberOfHMetrics = v.getUint16(hhea + 34);
    this.cmap = this.findCmap();
    this.kernPairs = this.findKernPairs();
  }

  private table(tag: string): number {
    const offset = this.tables.get(tag);
    if (offset === undefined) throw new Error(`font has no ${tag} table`);
    return offset;
  }

  /** The glyph for a Unicode code point; 0 (.notdef) when the font has none. */
  glyphIndex(codePoint: number): number {
    const v = this.view;
    const { format, offset } = this.cmap;
    if (format === 12) {
      const groups = v.getUint32(offset + 12);
      let lo = 0;
      let hi = groups - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const g = offset + 16 + 12 * mid;
        if (codePoint < v.getUint32(g)) hi = mid - 1;
        else if (codePoint > v.getUint32(g + 4)) lo = mid + 1;
        else return v.getUint32(g + 8) + codePoint - v.getUint32(g);
      }
      return 0;
    }
    if (codePoint > 0xffff) return 0;
    const segments = v.getUint16(offset + 6) >> 1;
    const ends = offset + 14;
    const starts = ends + 2 * segments + 2;
    const deltas = starts + 2 * segments;
    const rangeOffsets = deltas + 2 * segments;
    for (let s = 0; s < segments; s++) {
      if (v.getUint16(ends + 2 * s) < codePoint) continue;
      const start = v.getUint16(starts + 2 * s);
      if (start > codePoint) return 0;
      const delta = v.getUint16(deltas + 2 * s);
      const rangeOffset = v.getUint16(rangeOffsets + 2 * s);
      if (rangeOffset === 0) return (codePoint + delta) & 0xffff;
      const glyph = v.getUint16(rangeOffsets + 2 * s + rangeOffset + 2 * (codePoint - start));
      return glyph === 0 ? 0 : (glyph + delta) & 0xffff;
    }
    return 0;
  }

  advanceWidth(glyph: number): number {
    const index = Math.min(glyph, this.numberOfHMetrics - 1);
    return this.view.getUint16(this.table("hmtx") + 4 * index);
  }

  /** Horizontal adjustment between two glyphs, in font units (usually negative). */
  kerning(left: number, right: number): number {
    if (!this.kernPairs) return 0;
    const v = this.view;
    const key = ((left << 16) | right) >>> 0;
    let lo = 0;
    let hi = this.kernPairs.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const pair = this.kernPairs.offset + 6 * mid;
      const k = v.getUint32(pair);
      if (k < key) lo = mid + 1;
      else if (k > key) hi = mid - 1;
      else return v.getInt16(pair + 4);
    }
    return 0;
  }

  outline(glyph: number): Outline {
    const contours: Outline = [];
    this.appendOutline(glyph, IDENTITY, contours, 0);
    return contours;
  }

  private findCmap(): { format: number; offset: number } {
    const v = this.view;
    const cmap = this.table("cmap");
    const count = v.getUint16(cmap + 2);
    let best: { format: number; offset: number } | undefined;
    for (let i = 0; i < count; i++) {
      const platform = v.getUint16(cmap + 4 + 8 * i);
      const encoding = v.getUint16(cmap + 6 + 8 * i);
      const offset = cmap + v.getUint32(cmap + 8 + 8 * i);
      const format = v.getUint16(offset);
      const unicode = platform === 0 || (platform === 3 && (encoding === 1 || encoding === 10));
      if (!unicode || (format !== 4 && format !== 12)) continue;
      if (!best || format === 12) best = { format, offset };
    }
    if (!best) throw new Error("font has no Unicode cmap");
    return best;
  }

  private findKernPairs(): { offset: number; count: number } | undefined {
    const kern = this.tables.get("kern");
    if (kern === undefined || this.view.getUint16(kern) !== 0) return undefined;
    let sub = kern + 4;
    for (let i = 0; i < this.view.getUint16(kern + 2); i++) {
      const length = this.view.getUint16(sub + 2);
      const coverage = this.view.getUint16(sub + 4);
      // Format 0, horizontal, plain kerning values (not minimum, not cross-stream).
      if (coverage >> 8 === 0 && (coverage & 0x7) === 1)
        return { offset: sub + 14, count: this.view.getUint16(sub + 6) };
      sub += length;
    }
    return undefined;
  }

  private appendOutline(glyph: number, t: Transform, out: Outline, depth: number): void {
    const v = this.view;
    const loca = this.table("loca");
    const start = this.longLoca ? v.getUint32(loca + 4 * glyph) : v.getUint16(loca + 2 * glyph) * 2;
    const end = this.longLoca ? v.getUint32(loca + 4 * glyph + 4) : v.getUint16(loca + 2 * glyph + 2) * 2;
    if (end <= start || depth > 8) return; // empty glyph (space), or a runaway composite
    const g = this.table("glyf") + start;
    const contourCount = v.getInt16(g);
    if (contourCount >= 0) this.appendSimple(g, contourCount, t, out);
    else this.appendComposite(g, t, out, depth);
  }

  private appendSimple(g: number, contourCount: number, t: Transform, out: Outline): void {
    const v = this.view;
    const endPoints: number[] = [];
    for (let i = 0; i < contourCount; i++) endPoints.push(v.getUint16(g + 10 + 2 * i));
    const pointCount = contourCount ? endPoints[contourCount - 1]! + 1 : 0;
    let p = g + 10 + 2 * contourCount;
    p += 2 + v.getUint16(p); // skip the hinting instructions
    const flags = new Uint8Array(pointCount);
    for (let i = 0; i < pointCount; ) {
      const flag = v.getUint8(p++);
      flags[i++] = flag;
      if (flag & 8) for (let repeat = v.getUint8(p++); repeat > 0; repeat--) flags[i++] = flag;
    }
    const coordinates = (shortBit: number, sameBit: number) => {
      const values = new Int32Array(pointCount);
      let value = 0;
      for (let i = 0; i < pointCount; i++) {
        const flag = flags[i]!;
        if (flag & shortBit) {
          const delta = v.getUint8(p++);
          value += flag & sameBit ? delta : -delta;
        } else if (!(flag & sameBit)) {
          value += v.getInt16(p);
          p += 2;
        }
        values[i] = value;
      }
      return values;
    };
    const xs = coordinates(2, 16);
    const ys = coordinates(4, 32);
    let first = 0;
    for (const last of endPoints) {
      const contour: OutlinePoint[] = [];
      for (let i = first; i <= last; i++) {
        const x = xs[i]!;
        const y = ys[i]!;
        contour.push({
          x: t[0] * x + t[2] * y + t[4],
          y: t[1] * x + t[3] * y + t[5],
          onCurve: (flags[i]! & 1) === 1,
        });
      }
      if (contour.length > 1) out.push(contour);
      first = last + 1;
    }
  }

  private appendComposite(g: number, t: Transform, out: Outline, depth: number): void {
    const v = this.view;
    let p = g + 10;
    for (;;) {
      const flags = v.getUint16(p);
      const component = v.getUint16(p + 2);
      p += 4;
      let dx = 0;
      let dy = 0;
      if (flags & 1) {
        dx = v.getInt16(p);
        dy = v.getInt16(p + 2);
        p += 4;
      } else {
        dx = v.getInt8(p);
        dy = v.getInt8(p + 1);
        p += 2;
      }
      if (!(flags & 2)) dx = dy = 0; // anchored by point numbers: rare, and only a nudge; ignored
      let [a, b, c, d] = [1, 0, 0, 1];
      const f2dot14 = (at: number) => v.getInt16(at) / 16384;
      if (flags & 8) {
        a = d = f2dot14(p);
        p += 2;
      } else if (flags & 0x40) {
        a = f2dot14(p);
        d = f2dot14(p + 2);
        p += 4;
      } else if (flags & 0x80) {
        [a, b, c, d] = [f2dot14(p), f2dot14(p + 2), f2dot14(p + 4), f2dot14(p + 6)];
        p += 8;
      }
      // Compose: the component's own transform first, then the parent's.
      const composed: Transform = [
        t[0] * a + t[2] * b,
        t[1] * a + t[3] * b,
        t[0] * c + t[2] * d,
        t[1] * c + t[3] * d,
        t[0] * dx + t[2] * dy + t[4],
        t[1] * dx + t[3] * dy + t[5],
      ];
      this.appendOutline(component, composed, out, depth + 1);
      if (!(flags & 0x20)) return;
    }
  }
}
