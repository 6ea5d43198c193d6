import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { renderMark } from "../../src/images";
import { decodePng } from "../../src/images/png";
import type { Rgba } from "../../src/images/rgba";
import { engineTextMark } from "../../src/operations/text-mark";
import { emojiIn, forgetEmoji } from "../../src/text/emoji";
import { FontUnavailableError } from "../../src/text/fonts";
import { renderTextMark, type TextMarkOptions, UndrawableTextError } from "../../src/text/mark";
import { heldBucket, seedEmojiPack } from "./fonts";
import { pango, pangoMissing as pangoMissingReason } from "./pango";
import { colourSimilarity, saturatedShare } from "./similarity";

const base: TextMarkOptions = {
  text: "",
  size: 48,
  color: "#000000",
  opacity: 1,
  fontFamily: "sans",
  fontWeight: "regular",
  env,
};
const mark = async (text: string, extra: Partial<TextMarkOptions> = {}): Promise<Rgba> => {
  const image = await renderTextMark({ ...base, ...extra, text });
  if (!image) throw new Error(`nothing drawn for ${JSON.stringify(text)}`);
  return image;
};
const same = (a: Rgba, b: Rgba) =>
  a.width === b.width && a.height === b.height && Buffer.from(a.data).equals(Buffer.from(b.data));

/**
 * Emoji drawn here and by Pango (cairo draws Noto Color Emoji's bitmaps) score 0.98–0.999 on this machine; the
 * nearest wrong picture (the keycap 2 for 1, the thumb without skin tone) 0.90–0.93 (docs/text-rendering.md).
 */
const SIMILAR = 0.95;

let skipped: string | undefined;
let pangoMissing: string | undefined;

beforeAll(async () => {
  const seeded = await seedEmojiPack();
  if (!seeded.ok) skipped = seeded.reason;
  pangoMissing = await pangoMissingReason();
}, 120_000);

describe("renderTextMark: colour emoji", () => {
  // Noto draws the family and the keycap grey: they are checked for shape, not for saturation.
  it.each([
    ["grinning face", "😀", "😎", true],
    ["ZWJ family", "👨‍👩‍👧‍👦", "👨", false],
    ["ZWJ profession", "👩🏾‍🚀", "👩🏾", true],
    ["flag", "🇫🇷", "🇩🇪", true],
    ["keycap", "1️⃣", "2️⃣", false],
    ["skin tone", "👍🏽", "👍", true],
    ["tag flag", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "🏴", true],
  ])("%s: one picture, in colour, like Pango's", async (_, emoji, other, coloured) => {
    if (skipped) return void console.warn(`skipped: ${skipped}`);
    expect(emojiIn(emoji)).toEqual([emoji]);
    const [image, alone, smile] = await Promise.all([mark(emoji), mark(other), mark("😀")]);
    // One picture: about as wide as any single emoji (ink widths differ a little), not one per code point.
    expect(image.width).toBeLessThan(smile.width * 1.2);
    expect(same(image, alone)).toBe(false);
    if (coloured) expect(saturatedShare(image)).toBeGreaterThan(0.2);
    if (pangoMissing) return void console.warn(`Pango comparison skipped: ${pangoMissing}`);
    const reference = await pango(emoji, "Noto Color Emoji");
    const score = colourSimilarity(image, reference);
    const control = colourSimilarity(image, await pango(other, "Noto Color Emoji"));
    console.log(`${emoji}: ${score.toFixed(3)} (control ${other}: ${control.toFixed(3)})`);
    expect(score).toBeGreaterThan(SIMILAR);
    expect(score).toBeGreaterThan(control);
  });

  it('lays out "Hi 😀 مرحبا": Latin left, the emoji in colour between, Arabic right', async () => {
    if (skipped) return void console.warn(`skipped: ${skipped}`);
    const image = await mark("Hi 😀 مرحبا");
    const saturatedColumns = columnsWhere(image, (r, g, b) => Math.max(r, g, b) - Math.min(r, g, b) > 80);
    const smile = await mark("😀");
    // The colour is one emoji wide, with text ink on both sides of it.
    expect(saturatedColumns.last - saturatedColumns.first).toBeLessThanOrEqual(smile.width);
    expect(saturatedColumns.first).toBeGreaterThan(image.width * 0.15);
    expect(saturatedColumns.last).toBeLessThan(image.width * 0.6);
    const [latin, arabic] = await Promise.all([mark("Hi"), mark("مرحبا")]);
    expect(image.width).toBeGreaterThan(latin.width + smile.width + arabic.width);
    if (pangoMissing) return;
    const score = colourSimilarity(image, await pango("Hi 😀 مرحبا", "Noto Sans"), 16);
    console.log(`Hi 😀 مرحبا: ${score.toFixed(3)}`);
    expect(score).toBeGreaterThan(0.6);
  });

  it("keeps emoji in a right-to-left line in their place", async () => {
    if (skipped) return void console.warn(`skipped: ${skipped}`);
    // "مرحبا 😀" in a right-to-left paragraph: the emoji ends the line, so it is on the left.
    const image = await mark("مرحبا 😀");
    const colour = columnsWhere(image, (r, g, b) => Math.max(r, g, b) - Math.min(r, g, b) > 80);
    expect(colour.last).toBeLessThan(image.width / 2);
  });

  it("gives video the same mark as images (the engine's text_mark PNG)", async () => {
    if (skipped) return void console.warn(`skipped: ${skipped}`);
    const params = { text: "Hi 👨‍👩‍👧‍👦 🇫🇷", font_size: 40, color: "#ffffff", opacity: 0.8 };
    const job = await engineTextMark({ env: env as unknown as Env }, params, 40);
    const image = await renderMark(params, 40, { FONTS: env.FONTS });
    expect(job.png).toBeDefined();
    const video = await decodePng(Buffer.from(job.png!, "base64"));
    expect(image).toBeDefined();
    expect(video.width).toBe(image!.width);
    expect(video.height).toBe(image!.height);
    expect(saturatedShare(video)).toBeGreaterThan(0.05);
  });
});

describe("renderTextMark: emoji it refuses", () => {
  it("names an emoji the pack has no picture for", async () => {
    if (skipped) return void console.warn(`skipped: ${skipped}`);
    // Unicode 16's face with bags under eyes: V8 knows it as RGI, Debian's Noto Color Emoji (Unicode 15) does not.
    const error = await mark("ok \u{1fae9} ok").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UndrawableTextError);
    expect((error as UndrawableTextError).characters).toEqual(["\u{1fae9}"]);
  });

  it("shares the pack's index and pictures once read, never a read still pending (it belongs to its request)", async () => {
    if (skipped) return void console.warn(`skipped: ${skipped}`);
    forgetEmoji();
    const fonts = heldBucket(env.FONTS);
    const first = mark("😀", { env: { FONTS: fonts.bucket } });
    // The second mark reads the index and picture itself while the first one's first read is still held.
    const second = await mark("😀", { env: { FONTS: fonts.bucket } });
    expect(fonts.reads()).toBeGreaterThan(1);
    fonts.release();
    expect(same(await first, second)).toBe(true);
    // Read once, they are kept for the isolate.
    const reads = fonts.reads();
    expect(same(await mark("😀", { env: { FONTS: fonts.bucket } }), second)).toBe(true);
    expect(fonts.reads()).toBe(reads);
  });

  it("says the pack is missing when no FONTS bucket is bound, and draws text without emoji without it", async () => {
    forgetEmoji();
    const error = await renderTextMark({ ...base, text: "😀", env: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FontUnavailableError);
    expect(await renderTextMark({ ...base, text: "Hello", env: {} })).toBeDefined();
  });
});

/** The first and last columns holding a pixel (alpha ≥ 50 %) the predicate accepts. */
function columnsWhere(image: Rgba, accept: (r: number, g: number, b: number) => boolean) {
  let first = image.width;
  let last = -1;
  for (let y = 0; y < image.height; y++)
    for (let x = 0; x < image.width; x++) {
      const i = (y * image.width + x) * 4;
      if (image.data[i + 3]! < 128 || !accept(image.data[i]!, image.data[i + 1]!, image.data[i + 2]!))
        continue;
      first = Math.min(first, x);
      last = Math.max(last, x);
    }
  return { first, last };
}
