import { env as workerEnv } from "cloudflare:test";
import type { ImageWatermarkParams } from "@p6/contract/params";
import { describe, expect, it } from "vitest";
import { compositeOver, placeMark } from "../../src/images/composite";
import { TextMarkError } from "../../src/images/errors";
import { decodePng } from "../../src/images/png";
import type { Rgba } from "../../src/images/rgba";
import { MAX_MARK_PIXELS, markBound, renderMark } from "../../src/images/text";
import { watermarkImage } from "../../src/images/watermark";
import { engineTextMark } from "../../src/operations/text-mark";
import * as markModule from "../../src/text/mark";
import { seedEmojiPack, seedRemoteFonts } from "../text/fonts";
import { changedBox, decodeOutput, encodeFixture, gradient } from "./fixtures";

/** The real font chain (helper textB's src/text/mark.ts) is needed for scripts beyond DejaVu Sans. */
const standIn = "STAND_IN" in markModule;

const W = 400;
const H = 300;
const base = gradient(W, H);
const env = {};

async function mark(
  params: ImageWatermarkParams,
  format: "png" | "jpeg" | "webp" = "png",
  fonts: { FONTS?: R2Bucket } = env,
) {
  const input = await encodeFixture(base, "png");
  const result = await watermarkImage(input, { format, ...params }, undefined, fonts);
  return decodeOutput(result.bytes);
}

/** The ink of `image` against the base, as a bitmap of changed pixels. */
function inkMask(image: Rgba): Uint8Array {
  const mask = new Uint8Array(image.width * image.height);
  for (let i = 0; i < mask.length; i++) {
    const d = Math.max(
      Math.abs(image.data[i * 4]! - base.data[i * 4]!),
      Math.abs(image.data[i * 4 + 1]! - base.data[i * 4 + 1]!),
      Math.abs(image.data[i * 4 + 2]! - base.data[i * 4 + 2]!),
    );
    mask[i] = d > 40 ? 1 : 0;
  }
  return mask;
}

const differing = (a: Uint8Array, b: Uint8Array) => a.reduce((n, v, i) => n + (v !== b[i] ? 1 : 0), 0);

describe("text marks on images", () => {
  it("composites exactly the rendered bitmap, placed by its ink bounds at position and margin", async () => {
    const params = {
      text: "Mark",
      font_size: 40,
      opacity: 0.5,
      color: "#FF0000",
      position: "top-right",
    } as const;
    const bitmap = (await renderMark(params, 40, env))!;
    const expected: Rgba = { ...base, data: base.data.slice() };
    const at = placeMark("top-right", 16, base, bitmap);
    expect(at).toEqual({ x: W - 16 - bitmap.width, y: 16 });
    compositeOver(expected, bitmap, at.x, at.y, 1);
    const image = await mark(params);
    expect(Buffer.from(image.data).equals(Buffer.from(expected.data))).toBe(true);
    // The ink touches the box the margin leaves: the bitmap is cropped to the glyphs.
    const box = changedBox(base, image)!;
    expect(box.y).toBe(16);
    expect(box.x + box.width).toBe(W - 16);
  });

  it("applies opacity once, as straight alpha: a glyph's solid middle is half red over the base", async () => {
    const image = await mark({
      text: "I",
      font_size: 120,
      opacity: 0.5,
      color: "#FF0000",
      position: "center",
    });
    // The middle of the I's stem, at the image centre: fully covered by the glyph.
    const i = ((H / 2) * W + W / 2) * 4;
    const b = base.data;
    expect(image.data[i]).toBeCloseTo(255 * 0.5 + b[i]! * 0.5, -1);
    expect(image.data[i + 1]).toBeCloseTo(b[i + 1]! * 0.5, -1);
  });

  it.each(["png", "jpeg", "webp"] as const)(
    "Arabic is drawn joined and distinct in %s output",
    async (format) => {
      const a = inkMask(await mark({ text: "مرحبا", font_size: 48, opacity: 1, color: "#000000" }, format));
      const b = inkMask(await mark({ text: "سلام", font_size: 48, opacity: 1, color: "#000000" }, format));
      expect(a.reduce((n, v) => n + v, 0)).toBeGreaterThan(200);
      expect(differing(a, b)).toBeGreaterThan(200);
    },
  );

  it.skipIf(standIn).each(["png", "jpeg", "webp"] as const)(
    "CJK characters are distinct glyphs, not missing-glyph boxes, in %s output",
    async (format) => {
      // The CJK faces live in the FONTS bucket, put there from Debian's fonts-noto-cjk as `npm run dev` does.
      const seeded = await seedRemoteFonts();
      if (!seeded.ok) throw new Error(seeded.reason);
      const masks = await Promise.all(
        ["水", "印", "日", "한"].map(async (text) =>
          inkMask(await mark({ text, font_size: 48, opacity: 1, color: "#000000" }, format, workerEnv)),
        ),
      );
      for (let i = 0; i < masks.length; i++)
        for (let j = i + 1; j < masks.length; j++)
          expect(differing(masks[i]!, masks[j]!)).toBeGreaterThan(50);
    },
  );

  it.skipIf(standIn).each(["png", "jpeg", "webp"] as const)(
    "colour emoji arrive in colour in %s output (the mark's colour does not tint them)",
    async (format) => {
      // The pictures live in the FONTS bucket, cut out of Debian's Noto Color Emoji as `npm run dev` does.
      const seeded = await seedEmojiPack();
      if (!seeded.ok) throw new Error(seeded.reason);
      const image = await mark(
        { text: "😀", font_size: 64, opacity: 1, color: "#000000" },
        format,
        workerEnv,
      );
      const mask = inkMask(image);
      // Noto's grinning face is yellow: changed pixels that are strongly yellow, which black text never gives.
      let yellow = 0;
      for (let i = 0; i < mask.length; i++) {
        const [r, g, b] = [image.data[i * 4]!, image.data[i * 4 + 1]!, image.data[i * 4 + 2]!];
        if (mask[i] && r > 180 && g > 130 && b < 100) yellow++;
      }
      expect(yellow).toBeGreaterThan(500);
    },
  );

  it.skipIf(standIn)("characters no font covers are refused, naming them", async () => {
    // Linear B: in no font of the chain.
    const error = await renderMark({ text: "ok 𐀀", font_size: 20 }, 20, env).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TextMarkError);
    expect((error as TextMarkError).field).toBe("params.text");
    expect((error as TextMarkError).message).toContain("U+10000");
  });

  it.skipIf(standIn)("multi-line text stacks lines: two lines are taller than one", async () => {
    const one = changedBox(base, await mark({ text: "Line", font_size: 30, opacity: 1 }))!;
    const two = changedBox(base, await mark({ text: "Line\nLine", font_size: 30, opacity: 1 }))!;
    expect(two.height).toBeGreaterThan(one.height * 1.6);
  });

  it("a mark over the pixel budget is refused before it is drawn, naming font_size", async () => {
    const params = { text: "W".repeat(20), font_size: 1000 };
    const bound = markBound(params, 1000);
    expect(bound.width * bound.height).toBeGreaterThan(MAX_MARK_PIXELS);
    const error = await mark(params).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TextMarkError);
    expect((error as TextMarkError).field).toBe("params.font_size");
  });

  it("a mark larger than the image but within the budget is clipped, not refused", async () => {
    const image = await mark({ text: "WWWWWWWWWW", font_size: 250, position: "center", opacity: 1 });
    expect([image.width, image.height]).toEqual([W, H]);
    expect(changedBox(base, image)!.width).toBe(W);
  });

  it("the engine gets the very bitmap images are composited with (the video path)", async () => {
    const params = { text: "Mark مرحبا", font_size: 36, opacity: 0.8, color: "#FFFF00" };
    const bitmap = (await renderMark(params, 36, env))!;
    const sent = await engineTextMark({ env: {} as Env }, params, 36);
    expect(sent.font_size).toBe(36);
    const decoded = await decodePng(Uint8Array.from(atob(sent.png!), (c) => c.charCodeAt(0)));
    expect([decoded.width, decoded.height]).toEqual([bitmap.width, bitmap.height]);
    expect(Buffer.from(decoded.data).equals(Buffer.from(bitmap.data))).toBe(true);
  });
});
