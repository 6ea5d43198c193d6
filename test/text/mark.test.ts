import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import NOTO_SANS from "../../assets/fonts/NotoSans-Regular.ttf";
import type { Rgba } from "../../src/images/rgba";
import { FontUnavailableError, forgetRemoteFonts } from "../../src/text/fonts";
import { splitAfterSpacingSigns } from "../../src/text/layout";
import { renderTextMark, type TextMarkOptions, UndrawableTextError } from "../../src/text/mark";
import { renderText } from "../../src/text/render";
import { heldBucket, seedRemoteFonts } from "./fonts";
import { pango, pangoMissing as pangoMissingReason } from "./pango";
import { inkSimilarity } from "./similarity";

const base: TextMarkOptions = {
  text: "",
  size: 48,
  color: "#000000",
  opacity: 1,
  fontFamily: "sans",
  fontWeight: "regular",
  env,
};
const mark = (text: string, extra: Partial<TextMarkOptions> = {}) =>
  renderTextMark({ ...base, ...extra, text });

/**
 * Every script of issue 17; `letters` are distinct characters that must draw distinct glyphs; `remote`: drawn
 * by a font from the FONTS bucket; `font`: Pango's font, named when its fallback from Noto Sans could pick
 * another face.
 */
const SCRIPTS: {
  script: string;
  text: string;
  letters: string[];
  remote?: true;
  font?: string;
  similar?: number;
}[] = [
  { script: "Latin", text: "Watermark 2026", letters: ["W", "a", "k"] },
  { script: "Greek", text: "Υδατογράφημα", letters: ["Υ", "δ", "φ"] },
  { script: "Cyrillic", text: "Водяной знак", letters: ["В", "д", "я"] },
  { script: "Arabic", text: "علامة مائية", letters: ["ع", "ل", "م"] },
  { script: "Hebrew", text: "סימן מים", letters: ["ס", "י", "מ"] },
  { script: "Devanagari", text: "जलचिह्न नमस्ते", letters: ["ज", "ल", "च"] },
  { script: "Bengali", text: "জলছাপ নমস্কার", letters: ["জ", "ল", "ছ"] },
  { script: "Tamil", text: "நீர்க்குறி", letters: ["ந", "ர", "க"] },
  { script: "Thai", text: "ลายน้ำ สวัสดี", letters: ["ล", "า", "ย"] },
  { script: "CJK SC", text: "水印测试", letters: ["水", "印", "测"], remote: true },
  { script: "CJK TC", text: "水印測試", letters: ["測", "試", "印"], remote: true },
  { script: "CJK JP", text: "透かし文字", letters: ["透", "か", "し"], remote: true },
  { script: "CJK KR", text: "워터마크", letters: ["워", "터", "마"], remote: true },
  // The Indic scripts not bundled (src/text/remote-fonts.ts REMOTE_SCRIPTS): "Punjabi/Gujarati/… language".
  ...[
    { script: "Gurmukhi", text: "ਪੰਜਾਬੀ ਭਾਸ਼ਾ", letters: ["ਪ", "ਜ", "ਬ"] },
    { script: "Gujarati", text: "ગુજરાતી ભાષા", letters: ["ગ", "જ", "ર"] },
    { script: "Oriya", text: "ଓଡ଼ିଆ ଭାଷା", letters: ["ଓ", "ଡ", "ଭ"] },
    { script: "Telugu", text: "తెలుగు భాష", letters: ["త", "ల", "గ"] },
    { script: "Kannada", text: "ಕನ್ನಡ ಭಾಷೆ", letters: ["ಕ", "ನ", "ಡ"] },
    { script: "Malayalam", text: "മലയാളം ഭാഷ", letters: ["മ", "ല", "യ"] },
    { script: "Sinhala", text: "සිංහල භාෂාව", letters: ["ස", "හ", "ල"] },
  ].map((entry) => ({ ...entry, remote: true as const, font: `Noto Sans ${entry.script}` })),
];

/**
 * Measured on this machine (docs/text-rendering.md): renderings that match score 0.72–0.99, the broken
 * controls (boxes, unjoined Arabic) −0.37–0.04.
 */
const SIMILAR = 0.6;

let remoteMissing: string | undefined;
let pangoMissing: string | undefined;

beforeAll(async () => {
  const seeded = await seedRemoteFonts();
  if (!seeded.ok) remoteMissing = seeded.reason;
  pangoMissing = await pangoMissingReason();
}, 120_000);

describe("renderTextMark: every script", () => {
  for (const { script, text, letters, remote, font, similar = SIMILAR } of SCRIPTS) {
    it(`${script}: distinct characters draw distinct glyphs, and the text matches Pango's rendering`, async (context) => {
      if (remote && remoteMissing) {
        console.warn(`skipped: ${remoteMissing}`);
        return context.skip();
      }
      const glyphs = await Promise.all(letters.map((letter) => mark(letter)));
      for (const glyph of glyphs) expect(glyph).toBeDefined();
      const keys = glyphs.map((g) => `${g!.width}x${g!.height}:${Buffer.from(g!.data).toString("base64")}`);
      expect(new Set(keys).size).toBe(letters.length);

      const image = await mark(text);
      expect(image).toBeDefined();
      if (pangoMissing) {
        console.warn(`Pango comparison skipped: ${pangoMissing}`);
        return;
      }
      const similarity = inkSimilarity(image!, await pango(text, font));
      console.log(`${script}: similarity to Pango ${similarity.toFixed(3)}`);
      expect(similarity).toBeGreaterThan(similar);
    });
  }

  it("mixed scripts in one line (Indic conjuncts beside Latin) draw as Pango does, not as boxes", async (context) => {
    if (pangoMissing) return context.skip();
    const text = "नमस्ते Hello தமிழ் สวัสดี";
    const similarity = inkSimilarity((await mark(text))!, await pango(text));
    console.log(`mixed: similarity to Pango ${similarity.toFixed(3)}`);
    expect(similarity).toBeGreaterThan(SIMILAR);
  });

  it("the comparison tells broken renderings apart (the threshold's negative controls)", async (context) => {
    if (pangoMissing) return context.skip();
    // Devanagari through a font without it: boxes.
    const boxes = await renderText({ ...base, text: "जलचिह्न नमस्ते", fonts: [new Uint8Array(NOTO_SANS)] });
    const boxScore = inkSimilarity(boxes!, await pango("जलचिह्न नमस्ते"));
    // Arabic drawn left to right and unjoined: its letters apart, in logical order.
    const unjoined = await mark("ة ي ئ ا م ة م ا ل ع");
    const unjoinedScore = inkSimilarity(unjoined!, await pango("علامة مائية"));
    console.log(`controls: boxes ${boxScore.toFixed(3)}, unjoined Arabic ${unjoinedScore.toFixed(3)}`);
    expect(boxScore).toBeLessThan(SIMILAR);
    expect(unjoinedScore).toBeLessThan(SIMILAR);
  });
});

/**
 * Words with spacing vowel signs (Mc) after or before their consonant: resvg-wasm 2.6.2 gives such a cluster
 * its widest glyph's advance, so without the split in layout.ts the next letter is drawn over the sign.
 */
const SPACING_SIGNS: { script: string; text: string; joined: string; font?: string; remote?: true }[] = [
  { script: "Devanagari", text: "नमस्कार", joined: "" },
  { script: "Devanagari", text: "काला पानी", joined: "कालापानी" },
  { script: "Bengali", text: "বাংলা ভাষা", joined: "বাংলাভাষা" },
  { script: "Tamil", text: "தமிழ் நாடு", joined: "தமிழ்நாடு" },
  // ो and ी; Bengali ো and Tamil ொ are two-part signs, one part before the consonant and one after.
  { script: "Devanagari", text: "कोई भी नहीं", joined: "कोईभीनहीं" },
  { script: "Bengali", text: "বোতল খোলা", joined: "বোতলখোলা" },
  // Pango's fallback from "Noto Sans" draws ப's vowel signs apart, on dotted circles: named, the font is ours.
  { script: "Tamil", text: "பொருள் கொடு", joined: "பொருள்கொடு", font: "Noto Sans Tamil" },
  // The scripts from R2 (U+0A00–U+0DFF, inside the split's range): post-base signs (ਾ ી ା ು ಾ ാ ා), pre-base
  // (െ ෙ) and two-part ones (ൊ ො).
  ...[
    { script: "Gurmukhi", text: "ਪਾਣੀ ਕਾਲਾ", joined: "ਪਾਣੀਕਾਲਾ" },
    { script: "Gujarati", text: "પાણી કાળું", joined: "પાણીકાળું" },
    { script: "Oriya", text: "ପାଣି ଭାଷା", joined: "ପାଣିଭାଷା" },
    { script: "Telugu", text: "గురువు నీరు", joined: "గురువునీరు" },
    { script: "Kannada", text: "ಕಾಫಿ ನೀರು", joined: "ಕಾಫಿನೀರು" },
    { script: "Malayalam", text: "വെള്ളം കൊടി", joined: "വെള്ളംകൊടി" },
    { script: "Sinhala", text: "ලංකාව කොළඹ", joined: "ලංකාවකොළඹ" },
  ].map((entry) => ({ ...entry, remote: true as const, font: `Noto Sans ${entry.script}` })),
];

describe("renderTextMark: spacing vowel signs keep their advance", () => {
  it("cuts words after a spacing sign that ends a syllable, not inside a cluster", () => {
    expect(splitAfterSpacingSigns("काला")).toEqual(["का", "ला"]);
    expect(splitAfterSpacingSigns("नमस्कार")).toEqual(["नमस्का", "र"]);
    // A mark after the sign stays with it (ाँ), a pre-base sign ends its syllable too (कि).
    expect(splitAfterSpacingSigns("काँच")).toEqual(["काँ", "च"]);
    expect(splitAfterSpacingSigns("किताब")).toEqual(["कि", "ता", "ब"]);
    expect(splitAfterSpacingSigns("বাংলা")).toEqual(["বাং", "লা"]);
    // Latin and Thai are left whole.
    expect(splitAfterSpacingSigns("Watermark")).toEqual(["Watermark"]);
    expect(splitAfterSpacingSigns("สวัสดี")).toEqual(["สวัสดี"]);
  });

  for (const { script, text, joined, font, remote } of SPACING_SIGNS) {
    it(`${script} ${text}: matches Pango's rendering${joined ? ", the space keeps its width" : ""}`, async (context) => {
      if (remote && remoteMissing) return context.skip();
      const image = await mark(text);
      expect(image).toBeDefined();
      if (joined) {
        // The space is ≈ 0.26 em in these fonts: the line with it is that much wider than the one without.
        const without = await mark(joined);
        expect(image!.width - without!.width).toBeGreaterThan(0.15 * base.size);
      }
      if (pangoMissing) return context.skip();
      const similarity = inkSimilarity(image!, await pango(text, font));
      console.log(`${script} ${text}: similarity to Pango ${similarity.toFixed(3)}`);
      expect(similarity).toBeGreaterThan(SIMILAR);
    });
  }
});

/** The columns without ink (alpha 0 all the way down). */
function emptyColumns(image: Rgba): number[] {
  const empty: number[] = [];
  for (let x = 0; x < image.width; x++) {
    let inked = false;
    for (let y = 0; y < image.height && !inked; y++) inked = image.data[(y * image.width + x) * 4 + 3]! > 0;
    if (!inked) empty.push(x);
  }
  return empty;
}

describe("renderTextMark: layout", () => {
  it("lays Arabic right to left and joins it", async () => {
    const image = await mark("ا ببب");
    const gap = emptyColumns(image!).filter((x) => x > 0 && x < image!.width - 1);
    expect(Math.min(...gap)).toBeGreaterThan(image!.width / 2);
    const joined = await mark("ببب");
    const apart = await mark("ب ب ب");
    expect(joined!.width).toBeLessThan(apart!.width);
  });

  it("puts a Latin word after an Arabic one on its left in a right-to-left line", async () => {
    const rtl = await mark("ببب II");
    const ltr = await mark("II ببب");
    // Both lines have the narrow "II" at their left end: in the RTL line it comes last, so it is leftmost.
    const leftInk = (image: Rgba) => {
      const empty = new Set(emptyColumns(image));
      let x = 0;
      while (!empty.has(x)) x++;
      return x;
    };
    expect(leftInk(rtl!)).toBeLessThan(rtl!.width / 4);
    expect(leftInk(ltr!)).toBeLessThan(ltr!.width / 4);
  });

  it("draws two lines taller than one, with each line centred", async () => {
    const one = await mark("Hello");
    const two = await mark("Hello\nHello");
    expect(two!.height).toBeGreaterThan(one!.height * 2);
    expect(Math.abs(two!.width - one!.width)).toBeLessThanOrEqual(1);
  });

  it("draws the three families and two weights differently", async () => {
    const images = await Promise.all(
      (["sans", "serif", "mono"] as const).flatMap((fontFamily) =>
        (["regular", "bold"] as const).map((fontWeight) => mark("Family", { fontFamily, fontWeight })),
      ),
    );
    const keys = images.map((g) => `${g!.width}x${g!.height}:${Buffer.from(g!.data).toString("base64")}`);
    expect(new Set(keys).size).toBe(6);
  });

  it("includes the stroke and the shadow in the bounds, in their colours", async () => {
    const plain = await mark("Mark");
    const stroked = await mark("Mark", { stroke: { color: "#ff0000", width: 3 } });
    const shadowed = await mark("Mark", { shadow: { color: "#0000ff", dx: 6, dy: 6, blur: 2 } });
    expect(stroked!.width).toBeGreaterThanOrEqual(plain!.width + 5);
    expect(shadowed!.width).toBeGreaterThanOrEqual(plain!.width + 6);
    expect(shadowed!.height).toBeGreaterThanOrEqual(plain!.height + 6);
    const has = (image: Rgba, rgb: [number, number, number]) => {
      for (let i = 0; i < image.data.length; i += 4)
        if (image.data[i + 3]! > 200 && rgb.every((v, c) => Math.abs(image.data[i + c]! - v) < 40))
          return true;
      return false;
    };
    expect(has(stroked!, [255, 0, 0])).toBe(true);
    expect(has(shadowed!, [0, 0, 255])).toBe(true);
  });

  it("applies the opacity to the whole mark", async () => {
    const half = await mark("Mark", { opacity: 0.5 });
    const maxAlpha = Math.max(...half!.data.filter((_, i) => i % 4 === 3));
    expect(maxAlpha).toBeGreaterThan(110);
    expect(maxAlpha).toBeLessThan(145);
  });
});

describe("renderTextMark: advances kept per isolate", () => {
  it("draws a mark again (advances remembered, no measuring render) with the same pixels, at any size", async () => {
    const text = "Remembered مرحبا 123";
    const first = await mark(text, { size: 40 });
    const again = await mark(text, { size: 40 });
    expect(again!.width).toBe(first!.width);
    expect(Buffer.from(again!.data).equals(Buffer.from(first!.data))).toBe(true);
    // At twice the size the remembered advances scale: the mark is about twice as wide.
    const double = await mark(text, { size: 80 });
    expect(double!.width / first!.width).toBeGreaterThan(1.9);
    expect(double!.width / first!.width).toBeLessThan(2.1);
  });
});

describe("renderTextMark: what it refuses", () => {
  it("returns nothing for blank text", async () => {
    expect(await mark("  \n ")).toBeUndefined();
    expect(await mark("\u200d")).toBeUndefined();
  });

  it("names the characters no font has, before drawing", async () => {
    const error = await mark("Hi \u{10380}\u{10381} ok").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UndrawableTextError);
    expect((error as UndrawableTextError).characters).toEqual(["\u{10380}", "\u{10381}"]);
    const control = await mark("a\u0007b").catch((e: unknown) => e);
    expect((control as UndrawableTextError).characters).toEqual(["\u0007"]);
  });

  it("does not read the R2 fonts for text the bundled fonts draw", async () => {
    // No FONTS bucket at all: a Latin/Arabic/Devanagari/Bengali/Tamil/Thai mark still draws.
    const text = "Hello مرحبا नमस्ते বাংলা தமிழ் สวัสดี";
    expect(await renderTextMark({ ...base, text, env: {} })).toBeDefined();
  });

  it("says an Indic R2 font is missing (FontUnavailableError, a 503 upstream) as for CJK", async (context) => {
    if (remoteMissing) return context.skip();
    forgetRemoteFonts();
    const unbound = await renderTextMark({ ...base, text: "ગુજરાતી", env: {} }).catch((e: unknown) => e);
    expect(unbound).toBeInstanceOf(FontUnavailableError);
    // In the bucket but not this weight's file: only the bold mark fails, with the key named.
    await env.FONTS.delete("NotoSansTelugu-Bold.ttf");
    try {
      expect(await mark("తెలుగు")).toBeDefined();
      const absent = await mark("తెలుగు", { fontWeight: "bold" }).catch((e: unknown) => e);
      expect(absent).toBeInstanceOf(FontUnavailableError);
      expect((absent as Error).message).toContain("NotoSansTelugu-Bold.ttf");
    } finally {
      expect(await seedRemoteFonts()).toEqual({ ok: true });
    }
    // A failed read is forgotten: once the file is back, the mark draws.
    expect(await mark("తెలుగు", { fontWeight: "bold" })).toBeDefined();
  });

  it("shares an R2 font once read, never a read still pending (it belongs to its request)", async (context) => {
    if (remoteMissing) return context.skip();
    forgetRemoteFonts();
    const fonts = heldBucket(env.FONTS);
    const first = mark("తెలుగు", { env: { FONTS: fonts.bucket } });
    // The second mark reads the font itself and draws while the first one's read is still held.
    expect(await mark("తెలుగు", { env: { FONTS: fonts.bucket } })).toBeDefined();
    expect(fonts.reads()).toBe(2);
    fonts.release();
    expect(await first).toBeDefined();
    // Read once, the font is kept for the isolate.
    expect(await mark("తెలుగు", { env: { FONTS: fonts.bucket } })).toBeDefined();
    expect(fonts.reads()).toBe(2);
  });

  it("reads only the R2 fonts of the scripts in the text, all of them for mixed text", async (context) => {
    if (remoteMissing) return context.skip();
    forgetRemoteFonts();
    // Kannada and Malayalam in one mark: both fonts are read, and not the CJK collection (absent, it fails nothing).
    await env.FONTS.delete("NotoSansCJK-Regular.ttc");
    try {
      expect(await mark("ಕನ್ನಡ മലയാളം")).toBeDefined();
    } finally {
      expect(await seedRemoteFonts()).toEqual({ ok: true });
    }
  });
});
