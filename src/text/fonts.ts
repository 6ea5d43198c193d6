import DEJAVU_SANS_MONO from "../../assets/fonts/DejaVuSansMono.ttf";
import DEJAVU_SANS_MONO_BOLD from "../../assets/fonts/DejaVuSansMono-Bold.ttf";
import NOTO_SANS_BOLD from "../../assets/fonts/NotoSans-Bold.ttf";
import NOTO_SANS from "../../assets/fonts/NotoSans-Regular.ttf";
import NOTO_SANS_ARABIC_BOLD from "../../assets/fonts/NotoSansArabic-Bold.ttf";
import NOTO_SANS_ARABIC from "../../assets/fonts/NotoSansArabic-Regular.ttf";
import NOTO_SANS_BENGALI_BOLD from "../../assets/fonts/NotoSansBengali-Bold.ttf";
import NOTO_SANS_BENGALI from "../../assets/fonts/NotoSansBengali-Regular.ttf";
import NOTO_SANS_DEVANAGARI_BOLD from "../../assets/fonts/NotoSansDevanagari-Bold.ttf";
import NOTO_SANS_DEVANAGARI from "../../assets/fonts/NotoSansDevanagari-Regular.ttf";
import NOTO_SANS_HEBREW_BOLD from "../../assets/fonts/NotoSansHebrew-Bold.ttf";
import NOTO_SANS_HEBREW from "../../assets/fonts/NotoSansHebrew-Regular.ttf";
import NOTO_SANS_TAMIL_BOLD from "../../assets/fonts/NotoSansTamil-Bold.ttf";
import NOTO_SANS_TAMIL from "../../assets/fonts/NotoSansTamil-Regular.ttf";
import NOTO_SANS_THAI_BOLD from "../../assets/fonts/NotoSansThai-Bold.ttf";
import NOTO_SANS_THAI from "../../assets/fonts/NotoSansThai-Regular.ttf";
import NOTO_SERIF_BOLD from "../../assets/fonts/NotoSerif-Bold.ttf";
import NOTO_SERIF from "../../assets/fonts/NotoSerif-Regular.ttf";
import { type Coverage, readCoverage } from "./cmap";
import { REMOTE_SCRIPTS, scriptFontKey } from "./remote-fonts";

/**
 * The fonts of text watermarks (docs/text-rendering.md): a fallback chain per family and weight. The core
 * set is bundled (Data modules); the CJK collections (~20 MB each) and the Indic scripts not bundled live in
 * the FONTS R2 bucket (REMOTE_FONTS), read on first use and kept for the isolate's life. Every file comes from
 * Debian's fonts-noto-* / fonts-dejavu packages.
 */

export type FontFamily = "sans" | "serif" | "mono";
export type FontWeight = "regular" | "bold";

/** One face of a font file: the family name resvg matches in `font-family`, and its code points. */
export type Face = { family: string; bytes: Uint8Array; coverage: Coverage };

/** A face kept in R2 (a collection: `index` picks the face), loaded only when the text needs it. */
export type RemoteFace = { family: string; key: string; index: number };

/**
 * A font kept in R2: the Unicode ranges worth reading it for (a character of the text no bundled face has),
 * and its face for a text and weight. Whether it really has a character is its cmap's answer, once loaded.
 */
export type RemoteFont = {
  name: string;
  blocks: readonly (readonly [number, number])[];
  face: (text: string, weight: FontWeight) => RemoteFace;
};

type Bundled = { family: string; data: ArrayBuffer };

const PRIMARY: Record<FontFamily, Record<FontWeight, Bundled>> = {
  sans: {
    regular: { family: "Noto Sans", data: NOTO_SANS },
    bold: { family: "Noto Sans", data: NOTO_SANS_BOLD },
  },
  serif: {
    regular: { family: "Noto Serif", data: NOTO_SERIF },
    bold: { family: "Noto Serif", data: NOTO_SERIF_BOLD },
  },
  mono: {
    regular: { family: "DejaVu Sans Mono", data: DEJAVU_SANS_MONO },
    bold: { family: "DejaVu Sans Mono", data: DEJAVU_SANS_MONO_BOLD },
  },
};

/** Script fallbacks shared by every family (Noto has no serif/mono cut in Debian for most of them). */
const SCRIPTS: Record<FontWeight, Bundled[]> = {
  regular: [
    { family: "Noto Sans", data: NOTO_SANS },
    { family: "Noto Sans Arabic", data: NOTO_SANS_ARABIC },
    { family: "Noto Sans Hebrew", data: NOTO_SANS_HEBREW },
    { family: "Noto Sans Devanagari", data: NOTO_SANS_DEVANAGARI },
    { family: "Noto Sans Bengali", data: NOTO_SANS_BENGALI },
    { family: "Noto Sans Tamil", data: NOTO_SANS_TAMIL },
    { family: "Noto Sans Thai", data: NOTO_SANS_THAI },
  ],
  bold: [
    { family: "Noto Sans", data: NOTO_SANS_BOLD },
    { family: "Noto Sans Arabic", data: NOTO_SANS_ARABIC_BOLD },
    { family: "Noto Sans Hebrew", data: NOTO_SANS_HEBREW_BOLD },
    { family: "Noto Sans Devanagari", data: NOTO_SANS_DEVANAGARI_BOLD },
    { family: "Noto Sans Bengali", data: NOTO_SANS_BENGALI_BOLD },
    { family: "Noto Sans Tamil", data: NOTO_SANS_TAMIL_BOLD },
    { family: "Noto Sans Thai", data: NOTO_SANS_THAI_BOLD },
  ],
};

/** Faces of NotoSansCJK-*.ttc (`fc-scan`): 0 JP, 1 KR, 2 SC, 3 TC, 4 HK. */
const CJK_FACE = { JP: 0, KR: 1, SC: 2, TC: 3 } as const;

/**
 * The CJK face for this text. One collection holds every glyph, but the shapes of shared ideographs follow
 * regional conventions: kana → Japanese, hangul → Korean, else Simplified Chinese. Traditional Chinese text
 * is drawn by the SC face too (all its characters are there, with mainland shapes): the API has no
 * language parameter to tell it apart.
 */
export function cjkFace(text: string, weight: FontWeight): RemoteFace {
  const region = /[\u3040-\u30ff\u31f0-\u31ff]/u.test(text)
    ? "JP"
    : /[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]/u.test(text)
      ? "KR"
      : "SC";
  const key = weight === "bold" ? "NotoSansCJK-Bold.ttc" : "NotoSansCJK-Regular.ttc";
  return { family: `Noto Sans CJK ${region}`, key, index: CJK_FACE[region] };
}

/** CJK scripts and symbols, and the punctuation, arrows and shapes Noto Sans may lack: not emoji. */
const CJK_BLOCKS: [number, number][] = [
  [0x1100, 0x11ff],
  [0x2000, 0x2bff],
  [0x2e80, 0x9fff],
  [0xa960, 0xa97f],
  [0xac00, 0xd7ff],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xffef],
  [0x20000, 0x3ffff],
];

/** The R2 fonts in fallback order: CJK, then the Indic scripts not bundled (src/text/remote-fonts.ts). */
export const REMOTE_FONTS: RemoteFont[] = [
  { name: "CJK", blocks: CJK_BLOCKS, face: cjkFace },
  ...REMOTE_SCRIPTS.map(({ script, blocks }) => ({
    name: script,
    blocks,
    face: (_text: string, weight: FontWeight) => ({
      family: `Noto Sans ${script}`,
      key: scriptFontKey(script, weight),
      index: 0,
    }),
  })),
];

/** Whether the character lies in one of the font's blocks: worth reading the font for it. */
export function worthReading(font: RemoteFont, character: string): boolean {
  const c = character.codePointAt(0)!;
  return font.blocks.some(([first, last]) => c >= first && c <= last);
}

const bundledFaces = new Map<ArrayBuffer, Face>();

function bundled(font: Bundled): Face {
  let face = bundledFaces.get(font.data);
  if (!face) {
    const bytes = new Uint8Array(font.data);
    face = { family: font.family, bytes, coverage: readCoverage(bytes) };
    bundledFaces.set(font.data, face);
  }
  return face;
}

/** The bundled chain for a family and weight, primary first; duplicates (Noto Sans twice) removed. */
export function bundledChain(family: FontFamily, weight: FontWeight): Face[] {
  const chain = [PRIMARY[family][weight], ...SCRIPTS[weight]].map(bundled);
  return chain.filter((face, i) => chain.indexOf(face) === i);
}

/**
 * R2 font files by key, per isolate, once read. Only bytes are shared, never a pending read: workerd ties
 * a read to the request that started it, and a request awaiting another's read fails with "Cannot perform
 * I/O on behalf of a different request" when that request ends first. A cold isolate's concurrent requests
 * each read the file (once per request: a request wants each file once); a failed read leaves nothing.
 */
const remoteFiles = new Map<string, Uint8Array>();

export class FontUnavailableError extends Error {}

async function remoteFile(bucket: R2Bucket | undefined, key: string): Promise<Uint8Array> {
  const known = remoteFiles.get(key);
  if (known) return known;
  if (!bucket) throw new FontUnavailableError(`no FONTS bucket is bound: cannot load ${key}`);
  const object = await bucket.get(key);
  if (!object)
    throw new FontUnavailableError(`font ${key} is not in the FONTS bucket (npm run deploy uploads it)`);
  const bytes = new Uint8Array(await object.arrayBuffer());
  if (!remoteFiles.has(key)) remoteFiles.set(key, bytes);
  return remoteFiles.get(key)!;
}

const remoteFaces = new Map<string, Face>();

export async function loadRemote(bucket: R2Bucket | undefined, remote: RemoteFace): Promise<Face> {
  const id = `${remote.key}#${remote.index}`;
  const known = remoteFaces.get(id);
  if (known) return known;
  const bytes = await remoteFile(bucket, remote.key);
  const face = { family: remote.family, bytes, coverage: readCoverage(bytes, remote.index) };
  remoteFaces.set(id, face);
  return face;
}

/** For tests and benchmarks: forget the R2 fonts read so far, as a new isolate would. */
export function forgetRemoteFonts(): void {
  remoteFiles.clear();
  remoteFaces.clear();
}
