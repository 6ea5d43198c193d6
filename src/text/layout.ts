import type { Face } from "./fonts";

/**
 * Itemisation and run order. resvg shapes a whole text chunk with each font it falls back to and gives up
 * (draws boxes) when two fonts shape it into different glyph counts, which Indic conjuncts always do: so
 * "नमस्ते Hi" fails as one `<text>`. Each run of one font therefore becomes its own chunk, measured and
 * placed by us, and only the order of runs (a run-level Unicode bidi: directions L2) is decided here;
 * inside a run resvg still does shaping and bidi (an Arabic run with digits).
 */
export type Run = { text: string; face: Face; rtl: boolean; space?: true };

const COMMON = /^[\p{Script=Common}\p{Script=Inherited}]$/u;
const RTL = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;
const STRONG = /\p{L}/u;
/** Marks and format characters (joiners, variation selectors) belong to the character before them. */
const MARK = /^[\p{M}\p{Cf}]$/u;

/** Splits a line into runs of one face: each character to the first face that has it; spaces, digits,
 * punctuation and marks stay in the current run when its face has them. */
export function itemise(line: string, faces: Face[]): Run[] {
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
  // Spaces at a run's ends become runs of their own, placed by the bidi rules (between an Arabic and a Latin
  // run in a right-to-left line they go with the line, not with the run that happened to hold them).
  return runs.flatMap(({ text, face }) => {
    const [, lead, core, trail] = text.match(/^(\s*)(.*?)(\s*)$/su)!;
    const pieces: Run[] = [];
    if (lead) pieces.push({ text: lead, face: faces[0]!, rtl: false, space: true });
    if (core) pieces.push({ text: core, face, rtl: isRtl(core) });
    if (trail) pieces.push({ text: trail, face: faces[0]!, rtl: false, space: true });
    return pieces;
  });
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
