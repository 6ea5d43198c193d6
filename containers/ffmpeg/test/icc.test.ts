/**
 * icc.ts (shared by the Worker and the engine): a profile read from one format and written into another is
 * read back by libvips (sharp), an independent reader, and the written file still decodes to the same pixels.
 */

import { readRgbProfile, withProfile } from "@p6/contract/icc";
import sharp from "sharp";
import { describe, expect, test } from "vitest";

const formats = ["png", "jpeg", "webp"] as const;
const raw = { raw: { width: 33, height: 17, channels: 3 as const } };
const pixels = Buffer.alloc(33 * 17 * 3, 0);
for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7) % 251;

describe("icc", () => {
  test.each(formats.flatMap((from) => formats.map((to) => [from, to] as const)))(
    "a P3 profile read from %s and written into %s is what libvips reads",
    async (from, to) => {
      const tagged = new Uint8Array(await sharp(pixels, raw).withIccProfile("p3").toFormat(from).toBuffer());
      const profile = (await readRgbProfile(from, tagged))!;
      expect(Buffer.from(profile)).toEqual((await sharp(tagged).metadata()).icc);
      const plain = await sharp(pixels, raw).toFormat(to, { lossless: true }).toBuffer();
      const written = await withProfile(to, new Uint8Array(plain), profile);
      expect((await sharp(written).metadata()).icc).toEqual(Buffer.from(profile));
      const [before, after] = await Promise.all(
        [plain, written].map((b) => sharp(b).keepIccProfile().raw().toBuffer()),
      );
      expect(after).toEqual(before);
    },
  );

  test("a WebP with alpha keeps its alpha flag and pixels when rewrapped", async () => {
    const rgba = Buffer.alloc(20 * 10 * 4, 200);
    for (let i = 3; i < rgba.length; i += 8) rgba[i] = 0;
    const webp = await sharp(rgba, { raw: { width: 20, height: 10, channels: 4 } })
      .webp({ quality: 90 })
      .toBuffer();
    const profile = (await readRgbProfile(
      "png",
      await sharp(rgba, { raw: { width: 20, height: 10, channels: 4 } })
        .withIccProfile("p3")
        .png()
        .toBuffer(),
    ))!;
    const written = await withProfile("webp", new Uint8Array(webp), profile);
    expect(await sharp(written).metadata()).toMatchObject({ width: 20, height: 10, hasAlpha: true });
    expect(await sharp(written).raw().toBuffer()).toEqual(await sharp(webp).raw().toBuffer());
  });

  test("CMYK profiles are not carried; a malformed or absent one is null", async () => {
    const cmyk = await sharp(pixels, raw).toColourspace("cmyk").keepIccProfile().jpeg().toBuffer();
    expect((await sharp(cmyk).metadata()).icc).toBeDefined();
    expect(await readRgbProfile("jpeg", new Uint8Array(cmyk))).toBeNull();
    expect(await readRgbProfile("png", new Uint8Array(await sharp(pixels, raw).png().toBuffer()))).toBeNull();
  });
});
