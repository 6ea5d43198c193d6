import { bytesToBase64 } from "../util/encoding";
import { FontUnavailableError } from "./fonts";
import { EMOJI_PACK_KEY } from "./remote-fonts";

/**
 * Colour emoji in text marks (docs/text-rendering.md). resvg-wasm draws no colour glyphs, so each emoji — one
 * RGI sequence, ZWJ families, flags, keycaps and skin tones included — is drawn as one `<image>` of its Noto
 * Color Emoji picture, placed inline like a run of text. The pictures live in one R2 object (the pack built by
 * scripts/lib/emoji-pack.ts); its index is read on first use, each picture by a range read when a mark needs
 * it, and both are kept for the isolate's life.
 */

/**
 * One RGI emoji (the `v` flag's property of strings). The flag is a plain string because TypeScript, targeting
 * ES2023, refuses it in a literal; workerd's V8 has it (the tests run there).
 */
const UNICODE_SETS: string = "v";
const EMOJI = new RegExp("\\p{RGI_Emoji}", `g${UNICODE_SETS}`);
const EMOJI_SPLIT = new RegExp("(\\p{RGI_Emoji})", UNICODE_SETS);

/** A PNG with its placement in em units: the picture's box from the pen position and the advance. */
export type EmojiPicture = {
  href: string;
  /** Left of the picture from the pen, in em. */
  left: number;
  /** Top of the picture above the baseline, in em. */
  top: number;
  width: number;
  height: number;
  advance: number;
};

/** The emoji sequences of the text, each once, in order. */
export function emojiIn(text: string): string[] {
  return [...new Set(text.match(EMOJI) ?? [])];
}

/** The text cut into alternating pieces: text, emoji, text, emoji, … (odd indexes are emoji). */
export function splitEmoji(text: string): string[] {
  return text.split(EMOJI_SPLIT);
}

/** The text with every emoji removed (what the fonts must still cover). */
export function withoutEmoji(text: string): string {
  return text.replace(EMOJI, "");
}

/** The pack's key for a sequence: its code points in hex, U+FE0F left out (the font maps it to nothing). */
export function emojiKey(sequence: string): string {
  return [...sequence]
    .map((c) => c.codePointAt(0)!)
    .filter((c) => c !== 0xfe0f)
    .map((c) => c.toString(16))
    .join("-");
}

type Entry = [
  offset: number,
  length: number,
  width: number,
  height: number,
  x: number,
  y: number,
  advance: number,
];
type PackIndex = { ppem: number; dataStart: number; pictures: Record<string, Entry> };

/**
 * The pack's index and pictures, per isolate, once read. As with the R2 fonts (src/text/fonts.ts), a
 * pending read is never shared across requests: workerd ties it to the request that started it.
 */
let packIndex: PackIndex | undefined;
const pictures = new Map<string, EmojiPicture>();

async function readIndex(bucket: R2Bucket | undefined): Promise<PackIndex> {
  if (packIndex) return packIndex;
  if (!bucket) throw new FontUnavailableError(`no FONTS bucket is bound: cannot load ${EMOJI_PACK_KEY}`);
  const head = await bucket.get(EMOJI_PACK_KEY, { range: { offset: 0, length: 4 } });
  if (!head)
    throw new FontUnavailableError(
      `${EMOJI_PACK_KEY} is not in the FONTS bucket (npm run deploy uploads it)`,
    );
  const length = new DataView(await head.arrayBuffer()).getUint32(0);
  const body = await bucket.get(EMOJI_PACK_KEY, { range: { offset: 4, length } });
  if (!body) throw new FontUnavailableError(`${EMOJI_PACK_KEY} vanished from the FONTS bucket`);
  const index = (await body.json()) as { ppem: number; pictures: Record<string, Entry> };
  packIndex ??= { ppem: index.ppem, pictures: index.pictures, dataStart: 4 + length };
  return packIndex;
}

async function readPicture(
  bucket: R2Bucket,
  index: PackIndex,
  key: string,
  entry: Entry,
): Promise<EmojiPicture> {
  const known = pictures.get(key);
  if (known) return known;
  const [offset, length, width, height, x, y, advance] = entry;
  const object = await bucket.get(EMOJI_PACK_KEY, { range: { offset: index.dataStart + offset, length } });
  if (!object) throw new FontUnavailableError(`${EMOJI_PACK_KEY} vanished from the FONTS bucket`);
  const png = new Uint8Array(await object.arrayBuffer());
  const em = index.ppem;
  const picture = {
    href: `data:image/png;base64,${bytesToBase64(png)}`,
    left: x / em,
    top: y / em,
    width: width / em,
    height: height / em,
    advance: advance / em,
  };
  if (!pictures.has(key)) pictures.set(key, picture);
  return pictures.get(key)!;
}

/**
 * The pictures of these sequences, by sequence, and the sequences the pack has no picture for (the caller
 * answers 400 naming them). Reads nothing when there are no emoji.
 */
export async function loadEmoji(
  sequences: string[],
  bucket: R2Bucket | undefined,
): Promise<{ pictures: Map<string, EmojiPicture>; missing: string[] }> {
  const found = new Map<string, EmojiPicture>();
  if (sequences.length === 0) return { pictures: found, missing: [] };
  const index = await readIndex(bucket);
  const missing = sequences.filter((s) => !index.pictures[emojiKey(s)]);
  const present = sequences.filter((s) => index.pictures[emojiKey(s)]);
  const loaded = await Promise.all(
    present.map((s) => readPicture(bucket!, index, emojiKey(s), index.pictures[emojiKey(s)]!)),
  );
  for (const [i, s] of present.entries()) found.set(s, loaded[i]!);
  return { pictures: found, missing };
}

/** For tests and benchmarks: forget the pack read so far, as a new isolate would. */
export function forgetEmoji(): void {
  packIndex = undefined;
  pictures.clear();
}
