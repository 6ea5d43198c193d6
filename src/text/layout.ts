import { type EmojiPicture, splitEmoji } from "./emoji";
import type { Face } from "./fonts";

/**
 * Itemisation and run order. resvg shapes a whole text chunk with each font it falls back to and gives up
 * (draws boxes) when two fonts shape it into different glyph counts, which Indic conjuncts always do: so
 * "नमस्ते Hi" fails as one `<text>`. Each run of one font therefore becomes its own chunk, measured and
 * placed by us, and only the order of runs (a run-level Unicode bidi: directions L2) is decided here;
 * inside a run resvg still does shaping and bidi (an Arabic run with digits).
 */
export type Run = { text: string; face: Face; rtl: boolean; space?: true; emoji?: EmojiPicture };

const COMMON = /^[\p{Script=Common}\p{Script=Inherited}]$/u;
const RTL = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;
const STRONG = /\p{L}/u;
/** Marks and format characters (joiners, variation selectors) belong to the character before them. */
const MARK = /^[\p{M}\p{Cf}]$/u;

/** Splits a line into runs of one face: each character to the first face that has it; spaces, digits,
 * punctuation and marks stay in the current run when its face has them. Each emoji sequence is a run of its
 * own, drawn by its picture (emoji.ts); it is neutral for bidi, like a symbol. */
export function itemise(line: string, faces: Face[], emoji = new Map<string, EmojiPicture>()): Run[] {
  return splitEmoji(line).flatMap((piece, i) => {
    if (i % 2 === 0) return itemiseText(piece, faces);
    const picture = emoji.get(piece);
    if (!picture) throw new Error(`no picture loaded for emoji ${JSON.stringify(piece)}`);
    return [{ text: piece, face: faces[0]!, rtl: false, emoji: picture }];
  });
}

function itemiseText(line: string, faces: Face[]): Run[] {
  const runs: { text: string; face: Face }[] = [];
  for (const character of line) {
    const codePoint = character.codePointAt(0)!;
    const current = runs.at(-1);
    const stays =
      MARK.test(character) ||
      (COMMON.test(character) && (current?.face.coverage.has(codePoint) || /\s/u.test(character)));
    if (current && stays) {
      current.text += character;
      continue;
    }
    const face = faces.find((f) => f.coverage.has(codePoint)) ?? current?.face ?? faces[0]!;
    if (current && current.face === face) current.text += character;
    else runs.push({ text: character, face });
  }
  // Every word is a run and every stretch of spaces one of its own, placed by the bidi rules: resvg loses
  // spaces inside some runs (a Thai run after SARA AM), and between an Arabic and a Latin word in a
  // right-to-left line a space goes with the line, not with the run that happened to hold it.
  return runs.flatMap(({ text, face }) =>
    text
      .split(/(\s+)/u)
      .filter((piece) => piece !== "")
      .flatMap((piece): Run[] =>
        /^\s+$/u.test(piece)
          ? [{ text: piece, face: faces[0]!, rtl: false, space: true }]
          : splitAfterSpacingSigns(piece).map((part) => ({ text: part, face, rtl: isRtl(part) })),
      ),
  );
}

/** A spacing vowel sign (Mc) of the Indic scripts, Devanagari to Sinhala. */
const INDIC_SPACING_SIGN = /[\u0900-\u0dff]/u;
const SPACING_SIGN = /\p{Mc}/u;

/**
 * resvg-wasm 2.6.2 gives a cluster of several glyphs the advance of its widest glyph, not their sum: a
 * spacing vowel sign shaped into its consonant's cluster (का, কা, கா, कि) loses its advance, and the next
 * letter is drawn over it. A word is therefore cut after each such sign that ends a syllable (the next
 * character is no mark or joiner), a cluster boundary, so shaping is unchanged; each piece ends with the
 * short cluster, whose lost advance `lostAdvance` gives back.
 */
export function splitAfterSpacingSigns(word: string): string[] {
  const pieces: string[] = [];
  let piece = "";
  let signed = false;
  for (const character of word) {
    if (signed && !MARK.test(character)) {
      pieces.push(piece);
      piece = "";
      signed = false;
    }
    piece += character;
    if (SPACING_SIGN.test(character) && INDIC_SPACING_SIGN.test(character)) signed = true;
  }
  if (piece !== "") pieces.push(piece);
  return pieces;
}

/**
 * The advance (in em) resvg loses in a run: the nominal advances of its Indic spacing signs (decomposed, so
 * Bengali ো counts its two parts), which resvg folds into their consonant's cluster.
 */
export function lostAdvance(run: Run): number {
  if (run.space || run.emoji) return 0;
  let lost = 0;
  for (const character of run.text.normalize("NFD"))
    if (SPACING_SIGN.test(character) && INDIC_SPACING_SIGN.test(character))
      lost += run.face.coverage.advance(run.face.coverage.glyph(character.codePointAt(0)!));
  return lost;
}

function strongDirection(text: string): "l" | "r" | undefined {
  const strong = text.match(STRONG)?.[0];
  return strong === undefined ? undefined : RTL.test(strong) ? "r" : "l";
}

function isRtl(text: string): boolean {
  return strongDirection(text) === "r";
}

/** Runs in visual order, left to right: paragraph direction from the first strong letter (P2), neutral runs
 * take their neighbours' direction when both agree, else the paragraph's (N1/N2), then L2 reversal. */
export function visualOrder(runs: Run[]): Run[] {
  const paragraphRtl = strongDirection(runs.map((r) => r.text).join("")) === "r";
  const direction = runs.map((run) => strongDirection(run.text));
  // Digits after Arabic letters are Arabic numbers, ordered right to left with them (bidi rule W2).
  let previous: string | undefined;
  runs.forEach((run, i) => {
    if (direction[i] === undefined && /\p{Nd}/u.test(run.text) && previous === "arabic") direction[i] = "r";
    if (direction[i] !== undefined) previous = /\p{Script=Arabic}/u.test(run.text) ? "arabic" : direction[i];
  });
  const resolved = direction.map((d, i) => {
    if (d) return d;
    const before = direction.slice(0, i).findLast((x) => x !== undefined);
    const after = direction.slice(i + 1).find((x) => x !== undefined);
    return before && before === after ? before : paragraphRtl ? "r" : "l";
  });
  const levels = resolved.map((d) => (paragraphRtl ? (d === "r" ? 1 : 2) : d === "r" ? 1 : 0));
  const order = runs.map((_, i) => i);
  for (let level = Math.max(0, ...levels); level >= 1; level--) {
    let i = 0;
    while (i < order.length) {
      if (levels[order[i]!]! < level) {
        i++;
        continue;
      }
      let j = i;
      while (j < order.length && levels[order[j]!]! >= level) j++;
      order.splice(i, j - i, ...order.slice(i, j).reverse());
      i = j;
    }
  }
  return order.map((i) => runs[i]!);
}
