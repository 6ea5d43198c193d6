import type { Rgba } from "../images/rgba";
import { emojiIn, loadEmoji, withoutEmoji } from "./emoji";
import {
  bundledChain,
  type Face,
  type FontFamily,
  type FontWeight,
  loadRemote,
  REMOTE_FONTS,
  worthReading,
} from "./fonts";
import { itemise, lostAdvance, type Run, visualOrder } from "./layout";
import { rasterise, renderSvg } from "./resvg";
import { advancesFrom, inkRights, markSvg, measureSvg, type Paint, probeAdvances, probes } from "./svg";

/**
 * A text watermark as pixels: the text shaped (rustybuzz), laid out in both directions (bidi) and drawn with
 * the fonts it needs (docs/text-rendering.md). The same RGBA serves images (composited) and video (sent to the
 * engine as a PNG overlay).
 */
export type TextMarkOptions = {
  text: string;
  /** Font size in pixels. */
  size: number;
  /** CSS colour. */
  color: string;
  /** 0..1, for the whole mark (fill, stroke and shadow together). */
  opacity: number;
  fontFamily: FontFamily;
  fontWeight: FontWeight;
  /** An outline of `width` pixels around each glyph, drawn under the fill. */
  stroke?: { color: string; width: number };
  /** A copy of the mark offset by (dx, dy) pixels under it, blurred by `blur` pixels (a CSS blur radius). */
  shadow?: { color: string; dx: number; dy: number; blur?: number };
  env: { FONTS?: R2Bucket };
};

/** Some characters are in no font of the chain (the API answers 400 naming them). */
export class UndrawableTextError extends Error {
  readonly characters: string[];
  constructor(characters: string[]) {
    super(`no font can draw ${characters.map((c) => JSON.stringify(c)).join(", ")}`);
    this.name = "UndrawableTextError";
    this.characters = characters;
  }
}

/** Cropped to the ink (stroke and shadow included); undefined when nothing would be drawn (blank text). */
export async function renderTextMark(options: TextMarkOptions): Promise<Rgba | undefined> {
  const text = decomposeSaraAm(options.text.replace(/\r\n?/g, "\n"));
  if (!/\S/u.test(text.replace(IGNORABLE, ""))) return undefined;
  const { faces, emoji } = await facesAndPictures(
    text,
    options.fontFamily,
    options.fontWeight,
    options.env.FONTS,
  );
  const fonts = faces.map((face) => face.bytes);
  const lines = text.split("\n").map((line) => itemise(line, faces, emoji.pictures));
  const runs = lines.flat();
  // Emoji advances are known from their pictures; only text runs are measured.
  const measured = await measure(
    runs.filter((run) => !run.emoji),
    options,
    fonts,
  );
  let m = 0;
  const advances = runs.map((run) => (run.emoji ? run.emoji.advance * options.size : measured[m++]!));
  let next = 0;
  const placed = lines.map((line) => {
    const withAdvances = line.map((run) => ({ run, advance: advances[next++]! }));
    const order = visualOrder(line);
    return {
      runs: order,
      advances: order.map((run) => withAdvances.find((x) => x.run === run)!.advance),
    };
  });
  const mark = markSvg(placed, options);
  return (await rasterise(mark.svg, mark.width, mark.height, fonts)).image;
}

/**
 * Advances are measured at this size and scaled: resvg does not hint, so a run's advance is linear in the font
 * size, and a small measuring canvas costs a fraction of one at the mark's size.
 */
const MEASURE_SIZE = 32;

/**
 * Probe advances at MEASURE_SIZE by face, weight and text, kept for the isolate's life: a mark drawn again (the
 * same watermark on every image of a batch) needs no measuring render, only the mark's. Bounded by clearing.
 */
const measuredAdvances = new Map<string, number>();
const MEASURED_LIMIT = 5_000;

/** Each distinct probe (see svg.ts) not measured before in this isolate, in renders of at most ~4 Mpx each. */
async function measure(runs: Run[], mark: Paint, fonts: Uint8Array[]): Promise<number[]> {
  if (measuredAdvances.size > MEASURED_LIMIT) measuredAdvances.clear();
  const paint = { ...mark, size: MEASURE_SIZE };
  const scale = mark.size / MEASURE_SIZE;
  const all = probes(runs);
  const key = (run: Run) => `${run.face.family}\u0000${mark.fontWeight}\u0000${run.text}`;
  const distinct = [...new Map(all.map((run) => [key(run), run])).values()].filter(
    (run) => !measuredAdvances.has(key(run)),
  );
  let start = 0;
  while (start < distinct.length) {
    let end = start + 1;
    const fits = (n: number) => {
      const m = measureSvg(distinct.slice(start, n), paint);
      return m.width * m.height <= 4_000_000;
    };
    while (end < distinct.length && fits(end + 1)) end++;
    const chunk = distinct.slice(start, end);
    const svg = measureSvg(chunk, paint);
    const rendered = await renderSvg(svg.svg, svg.width, svg.height, fonts);
    const values = probeAdvances(rendered.pixels, rendered.width, svg.band, chunk.length);
    const rights = inkRights(rendered.pixels, rendered.width, svg.band, chunk.length, svg.anchor);
    for (const [i, run] of chunk.entries()) {
      // A run whose ink reaches past its advance by more than half its spacing signs lost them (layout.ts);
      // a sign that is part of a ligature (Tamil கு) draws inside the advance and lost nothing.
      const lost = lostAdvance(run) * MEASURE_SIZE;
      const overhang = rights[i]! - values[i]!;
      measuredAdvances.set(key(run), values[i]! + (lost > 0 && overhang > lost / 2 ? lost : 0));
    }
    start = end;
  }
  return advancesFrom(
    all.map((run) => measuredAdvances.get(key(run))! * scale),
    runs,
  );
}

/**
 * Thai SARA AM as NIKHAHIT + SARA AA, the nikhahit before any tone mark: what HarfBuzz's Thai shaper does
 * itself. rustybuzz 0.7 (inside resvg-wasm 2.6.2) decomposes it too but loses the SARA AA and the space after
 * it; given the decomposed sequence it draws it right.
 */
function decomposeSaraAm(text: string): string {
  return text.replace(/([\u0e48-\u0e4b]*)\u0e33/gu, "\u0e4d$1\u0e32");
}

/** Characters that draw nothing and need no font: joiners, direction marks, variation selectors, tags. */
const IGNORABLE =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: a list of single code points, each drawn by nothing
  /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff\u{e0000}-\u{e0fff}]/gu;

/**
 * The faces the text needs, in chain order: each character goes to the first face that has it (the bundled
 * chain, then the R2 fonts (CJK, the Indic scripts not bundled) only for characters still uncovered that lie
 * in their blocks). resvg then gets only these, because it copies every font it is given into WASM and
 * indexes it on each render.
 */
async function facesFor(
  text: string,
  family: FontFamily,
  weight: FontWeight,
  bucket: R2Bucket | undefined,
): Promise<Face[]> {
  const chain = bundledChain(family, weight);
  const used = new Set<Face>([chain[0]!]);
  let missing: string[] = [];
  for (const character of new Set(text.replace(IGNORABLE, ""))) {
    if (/\s/u.test(character)) continue;
    const codePoint = character.codePointAt(0)!;
    // Controls (other than the line breaks and tabs above) have no glyph anywhere and no place in SVG.
    if (codePoint < 0x20 || (codePoint >= 0x7f && codePoint < 0xa0)) {
      missing.push(character);
      continue;
    }
    const face = chain.find((candidate) => candidate.coverage.has(codePoint));
    if (face) used.add(face);
    else missing.push(character);
  }
  // resvg falls back through its fonts in the order given: keep the chain's order, the R2 fonts last.
  const faces = chain.filter((face) => used.has(face));
  // The R2 fonts the text needs are read together (a mark in Telugu and Kannada waits for one read, not two).
  const wanted = REMOTE_FONTS.filter((font) => missing.some((character) => worthReading(font, character)));
  const remote = await Promise.all(wanted.map((font) => loadRemote(bucket, font.face(text, weight))));
  for (const face of remote) {
    const has = (character: string) => face.coverage.has(character.codePointAt(0)!);
    if (missing.some(has)) faces.push(face);
    missing = missing.filter((character) => !has(character));
  }
  if (missing.length > 0) throw new UndrawableTextError(missing);
  return faces;
}

/**
 * renderTextMark's coverage check alone, without drawing: throws UndrawableTextError naming the characters no
 * font covers and emoji the pack lacks (and FontUnavailableError when the R2 fonts or pack cannot be read). Lets a task be refused before it
 * is queued.
 */
export async function checkDrawable(
  text: string,
  fontFamily: FontFamily,
  fontWeight: FontWeight,
  env: { FONTS?: R2Bucket },
): Promise<void> {
  await facesAndPictures(decomposeSaraAm(text.replace(/\r\n?/g, "\n")), fontFamily, fontWeight, env.FONTS);
}

/**
 * The faces the text outside emoji needs and the emoji's pictures (src/text/emoji.ts): emoji are pictures,
 * not glyphs. Throws UndrawableTextError naming characters no font covers or emoji the pack lacks.
 */
async function facesAndPictures(
  text: string,
  fontFamily: FontFamily,
  fontWeight: FontWeight,
  fonts: R2Bucket | undefined,
) {
  const [faces, emoji] = await Promise.all([
    facesFor(withoutEmoji(text), fontFamily, fontWeight, fonts),
    loadEmoji(emojiIn(text), fonts),
  ]);
  if (emoji.missing.length > 0) throw new UndrawableTextError(emoji.missing);
  return { faces, emoji };
}
