import type { ImageWatermarkParams, Position } from "@p6/contract/params";
import { beforeAll, describe, expect, it } from "vitest";
import { type ImageFormat, readImageHeader } from "../../src/images/header";
import type { Rgba } from "../../src/images/rgba";
import { watermarkImage } from "../../src/images/watermark";
import {
  changedBox,
  decodeOutput,
  encodeFixture,
  type FixtureFormat,
  gradient,
  halfTransparentLogo,
  meanDiff,
  solidLogo,
} from "./fixtures";

const W = 400;
const H = 300;
const LOGO_URL = "https://example.com/logo.png";
const base = gradient(W, H);
let basePng: Uint8Array;

beforeAll(async () => {
  basePng = await encodeFixture(base, "png");
});

/** PNG in, PNG out: lossless both ways, so every changed pixel is the watermark's doing. */
async function markLossless(params: ImageWatermarkParams, logo?: Rgba, logoFormat: FixtureFormat = "png") {
  const logoBytes = logo ? await encodeFixture(logo, logoFormat) : undefined;
  const result = await watermarkImage(basePng, { format: "png", ...params }, logoBytes);
  return { result, image: await decodeOutput(result.bytes) };
}

describe("formats", () => {
  const inputs: ImageFormat[] = ["png", "jpeg", "webp"];
  const outputs = ["same", "jpeg", "png", "webp"] as const;
  const cases = inputs.flatMap((input) => outputs.map((output) => [input, output] as const));

  it.each(cases)("%s in, format %s: right format, same dimensions", async (input, output) => {
    const bytes = await encodeFixture(base, input);
    const logo = await encodeFixture(halfTransparentLogo(60, 30), "png");
    const result = await watermarkImage(bytes, { watermark_url: LOGO_URL, format: output }, logo);
    const expected = output === "same" ? input : output;
    expect(result).toMatchObject({ format: expected, contentType: `image/${expected}`, width: W, height: H });
    expect(readImageHeader(result.bytes)).toEqual({
      format: expected,
      width: W,
      height: H,
      orientation: 1,
      alpha: expect.any(Boolean),
      animated: false,
    });
    const decoded = await decodeOutput(result.bytes);
    expect([decoded.width, decoded.height]).toEqual([W, H]);
  });

  it.each<FixtureFormat>(["png", "jpeg", "webp", "webp-lossless"])("takes a %s logo", async (logoFormat) => {
    const { image } = await markLossless(
      { watermark_url: LOGO_URL, opacity: 1, scale: 0.2 },
      solidLogo(80, 40),
      logoFormat,
    );
    const box = changedBox(base, image, 8);
    expect(box).toMatchObject({ x: 304, y: 244, width: 80, height: 40 });
  });

  it("lossy output changes the logo area and (almost) nothing else", async () => {
    const jpeg = await encodeFixture(base, "jpeg");
    const original = await decodeOutput(jpeg);
    const logo = await encodeFixture(solidLogo(80, 40), "png");
    const result = await watermarkImage(jpeg, { watermark_url: LOGO_URL, opacity: 1, quality: 90 }, logo);
    const image = await decodeOutput(result.bytes);
    expect(meanDiff(original, image, { x: 304, y: 244, width: 80, height: 40 })).toBeGreaterThan(60);
    expect(meanDiff(original, image, { x: 0, y: 0, width: W, height: 230 })).toBeLessThan(2);
    expect(meanDiff(original, image, { x: 0, y: 230, width: 290, height: 70 })).toBeLessThan(2);
  });

  it("flattens transparency on white for JPEG output", async () => {
    const clear = { width: 64, height: 48, data: new Uint8ClampedArray(64 * 48 * 4) };
    const result = await watermarkImage(await encodeFixture(clear, "png"), { text: "x", format: "jpeg" });
    const image = await decodeOutput(result.bytes);
    expect(Math.min(...image.data.subarray(0, 64 * 4 * 10))).toBeGreaterThanOrEqual(250);
  });
});

describe("placement", () => {
  const expected: Record<Position, [number, number]> = {
    "top-left": [16, 16],
    top: [160, 16],
    "top-right": [304, 16],
    left: [16, 130],
    center: [160, 130],
    right: [304, 130],
    "bottom-left": [16, 244],
    bottom: [160, 244],
    "bottom-right": [304, 244],
  };

  it.each(Object.entries(expected) as [Position, [number, number]][])(
    "%s: exactly the logo's rectangle changes",
    async (position, [x, y]) => {
      const { image } = await markLossless(
        { watermark_url: LOGO_URL, position, opacity: 1, scale: 0.2 },
        solidLogo(80, 40),
      );
      expect(changedBox(base, image)).toEqual({ x, y, width: 80, height: 40, count: 80 * 40 });
    },
  );

  it("honours the margin", async () => {
    const { image } = await markLossless(
      { watermark_url: LOGO_URL, position: "top-left", margin: 0, opacity: 1, scale: 0.2 },
      solidLogo(80, 40),
    );
    expect(changedBox(base, image)).toMatchObject({ x: 0, y: 0, width: 80, height: 40 });
  });
});

describe("blending", () => {
  it("opacity 0 changes nothing", async () => {
    const { image } = await markLossless({ watermark_url: LOGO_URL, opacity: 0 }, solidLogo(80, 40));
    expect(changedBox(base, image)).toBeNull();
  });

  it("transparent logo pixels leave the base untouched", async () => {
    const { image } = await markLossless(
      { watermark_url: LOGO_URL, opacity: 1 },
      halfTransparentLogo(80, 40),
    );
    // Only the opaque left half of the 80×40 logo at (304, 244).
    expect(changedBox(base, image)).toEqual({ x: 304, y: 244, width: 40, height: 40, count: 40 * 40 });
  });

  it("opacity mixes the logo with the base", async () => {
    const { image } = await markLossless({ watermark_url: LOGO_URL, opacity: 0.5 }, solidLogo(80, 40));
    const i = (260 * W + 320) * 4;
    for (const [c, logo] of [255, 0, 255].entries())
      expect(image.data[i + c]).toBeCloseTo((base.data[i + c]! + logo) / 2, -0.5);
  });
});

describe("scale", () => {
  it.each([
    [0.5, 200, 100],
    [0.25, 100, 50],
    [1, 400, 200],
  ])("scale %d makes the logo %d px wide", async (scale, width, height) => {
    const { image } = await markLossless(
      { watermark_url: LOGO_URL, scale, opacity: 1, margin: 0 },
      solidLogo(50, 25),
    );
    expect(changedBox(base, image)).toEqual({
      x: W - width,
      y: H - height,
      width,
      height,
      count: width * height,
    });
  });

  it("keeps alpha when resizing", async () => {
    const { image } = await markLossless(
      { watermark_url: LOGO_URL, scale: 0.4, opacity: 1, margin: 0 },
      halfTransparentLogo(40, 20),
    );
    // 160×80 with the opaque left half. Upscaling 4× with lanczos3 softens the alpha edge over a few source
    // pixels; past that, the transparent right half leaves the base untouched.
    const box = changedBox(base, image, 2)!;
    expect(box).toMatchObject({ x: 240, y: 220, height: 80 });
    expect(box.width).toBeGreaterThanOrEqual(80);
    expect(box.width).toBeLessThanOrEqual(92);
  });
});

describe("text", () => {
  it("draws in its corner and nowhere else", async () => {
    const { image } = await markLossless({ text: "Hello", opacity: 1, color: "#FF0000" });
    const box = changedBox(base, image)!;
    expect(box.count).toBeGreaterThan(50);
    expect(box.x).toBeGreaterThan(W / 2);
    expect(box.y).toBeGreaterThan(H / 2);
    expect(box.x + box.width).toBeLessThanOrEqual(W - 16);
    expect(box.y + box.height).toBeLessThanOrEqual(H - 16);
    // Default size: 5% of 300 px → 15 px, so the ink is about one cap height tall.
    expect(box.height).toBeGreaterThanOrEqual(9);
    expect(box.height).toBeLessThanOrEqual(16);
  });

  it("font_size sets the size", async () => {
    const { image } = await markLossless({ text: "Hy", font_size: 60, opacity: 1, position: "top-left" });
    const box = changedBox(base, image)!;
    expect(box.x).toBeGreaterThanOrEqual(16);
    expect(box.y).toBeGreaterThanOrEqual(16);
    // Ascender to descender of "Hy" at 60 px: about 0.95 em.
    expect(box.height).toBeGreaterThan(45);
    expect(box.height).toBeLessThan(65);
  });

  it("a fully transparent color changes nothing", async () => {
    const { image } = await markLossless({ text: "Hello", opacity: 1, color: "#FF000000" });
    expect(changedBox(base, image)).toBeNull();
  });

  // A mark larger than the image is clipped, within the mark's pixel budget; beyond it (this 20×1000 px
  // line) it is refused before it is drawn: test/images/text-mark.test.ts.
});

describe("speed", () => {
  it("1920×1080 JPEG + PNG logo → WebP", async () => {
    const photo = await encodeFixture(gradient(1920, 1080), "jpeg");
    const logo = await encodeFixture(halfTransparentLogo(400, 200), "png");
    const params = { watermark_url: LOGO_URL, format: "webp" } as const;
    await watermarkImage(photo, params, logo); // warm-up: codec instances
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const start = performance.now();
      await watermarkImage(photo, params, logo);
      times.push(Math.round(performance.now() - start));
    }
    console.log(`1920×1080 JPEG + PNG logo → WebP in workerd: ${times.join(", ")} ms`);
    expect(Math.min(...times)).toBeLessThan(5000);
  });
});
