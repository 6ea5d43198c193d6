/**
 * image.watermark on the engine (the Worker hands it images above 2.2 megapixels): the mark lands in its
 * corner and nowhere else, every output format, alpha kept or flattened on white, large images within the
 * limits, and the limits checked from the header before anything is decoded.
 */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  acTL,
  tiffWithOrientation,
  withExifOrientation,
  withPngChunk,
  withWebpExif,
} from "../../../test/images/exif.ts";
import { resolveBinaries } from "../src/config.ts";
import { traceCommands } from "../src/pipeline/ffmpeg.ts";
import type { EngineResult } from "../src/protocol.ts";
import {
  assertSafeMessage,
  errorOf,
  ffprobe,
  fixturePath,
  fixtureUrl,
  media,
  regionDiff,
  regionMean,
  saveBody,
  startTestEngine,
  type TestEngine,
} from "./support/engine.ts";
import { publish } from "./support/fixture-files.ts";
import { FIXTURES } from "./support/media.ts";
import { solidPng } from "./support/text-mark.ts";

const exec = promisify(execFile);

let engine: TestEngine;
beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine.close());

async function watermark(source: string, params: Record<string, unknown>, name: string) {
  const res = await engine.job("image.watermark", { source_url: source, params });
  if (res.status !== 200) throw new Error(`image.watermark answered ${res.status}: ${await res.text()}`);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  const contentType = res.headers.get("content-type");
  expect(Number(res.headers.get("content-length"))).toBe(result.size_bytes);
  const file = await saveBody(res, name);
  return { result, contentType, file, probe: await ffprobe(file) };
}

/** Decodes an image to raw RGBA (or RGB24), through `filter` (e.g. a turn) when given. */
async function rgba(file: string, pixFmt = "rgba", filter?: string): Promise<Buffer> {
  const { stdout } = await exec(
    resolveBinaries(process.env).ffmpeg,
    [
      "-v",
      "error",
      "-i",
      file,
      ...(filter ? ["-vf", filter] : []),
      "-f",
      "rawvideo",
      "-pix_fmt",
      pixFmt,
      "pipe:1",
    ],
    { encoding: "buffer", maxBuffer: 1 << 26 },
  );
  return stdout;
}
const rgb = (file: string) => rgba(file, "rgb24");

// photo.jpg is 300x200.
const W = 300;
const H = 200;

/** Largest mean difference outside a rectangle (the rest of the image, in four bands). */
function outside(a: Buffer, b: Buffer, r: { x: number; y: number; w: number; h: number }) {
  const bands = [
    { x: 0, y: 0, w: W, h: r.y },
    { x: 0, y: r.y + r.h, w: W, h: H - r.y - r.h },
    { x: 0, y: r.y, w: r.x, h: r.h },
    { x: r.x + r.w, y: r.y, w: W - r.x - r.w, h: r.h },
  ].filter((band) => band.w > 0 && band.h > 0);
  return Math.max(...bands.map((band) => regionDiff(a, b, W, band)));
}

describe("image.watermark", () => {
  test("a logo changes the bottom-right corner and nothing else", async () => {
    const { result, contentType, file } = await watermark(
      media(FIXTURES.jpeg),
      { watermark_url: media(FIXTURES.logo), scale: 0.5, opacity: 1, format: "png" },
      "logo.png",
    );
    expect(result).toEqual({ format: "png", size_bytes: expect.any(Number), width: W, height: H });
    expect(contentType).toBe("image/png");
    const before = await rgb(fixturePath(FIXTURES.jpeg));
    const after = await rgb(file);
    // 160x80 logo at half the width: 150x75 at x 134..284, y 109..184; its left half is opaque red.
    const opaque = { x: 137, y: 112, w: 68, h: 69 };
    expect(regionMean(after, W, opaque, 0)).toBeGreaterThan(240);
    expect(regionMean(after, W, opaque, 1)).toBeLessThan(15);
    // Its transparent half and everything else are untouched.
    expect(regionDiff(before, after, W, { x: 213, y: 112, w: 68, h: 69 })).toBeLessThan(1.5);
    expect(outside(before, after, { x: 132, y: 107, w: 154, h: 79 })).toBeLessThan(1.5);
  });

  test("opacity and position: a half-transparent logo at top-left", async () => {
    const { file } = await watermark(
      media(FIXTURES.jpeg),
      { watermark_url: media(FIXTURES.logo), scale: 0.5, opacity: 0.5, position: "top-left", margin: 0 },
      "half.jpg",
    );
    const before = await rgb(fixturePath(FIXTURES.jpeg));
    const after = await rgb(file);
    const opaque = { x: 4, y: 4, w: 66, h: 66 };
    // Half red over the photo: red rises by about half its distance to 255, green drops by about half.
    const red = regionMean(before, W, opaque, 0);
    const green = regionMean(before, W, opaque, 1);
    expect(regionMean(after, W, opaque, 0)).toBeCloseTo(red + (255 - red) / 2, -1);
    expect(regionMean(after, W, opaque, 1)).toBeCloseTo(green / 2, -1);
    expect(outside(before, after, { x: 0, y: 0, w: 154, h: 79 })).toBeLessThan(4); // JPEG re-encoding
  });

  test("a text mark (the Worker's bitmap, support/text-mark.ts) changes its corner only", async () => {
    const { file } = await watermark(
      media(FIXTURES.jpeg),
      { text: "MARK", position: "top-right", color: "#FFFF00", opacity: 1, font_size: 30, format: "png" },
      "text.png",
    );
    const before = await rgb(fixturePath(FIXTURES.jpeg));
    const after = await rgb(file);
    expect(regionDiff(before, after, W, { x: 200, y: 16, w: 84, h: 24 })).toBeGreaterThan(15);
    expect(outside(before, after, { x: 180, y: 8, w: 120, h: 40 })).toBeLessThan(1.5);
  });

  test("a text mark is the text_mark PNG overlaid as it is, at position and margin", async () => {
    const res = await engine.job("image.watermark", {
      source_url: media(FIXTURES.jpeg),
      params: { text: "x", font_size: 20, position: "top-left", margin: 10, opacity: 1, format: "png" },
      text_mark: { png: solidPng(40, 20, [0, 0, 255, 255]).toString("base64"), font_size: 20 },
    });
    expect(res.status).toBe(200);
    const file = await saveBody(res, "text-mark.png");
    const before = await rgb(fixturePath(FIXTURES.jpeg));
    const after = await rgb(file);
    expect(regionMean(after, W, { x: 10, y: 10, w: 40, h: 20 }, 2)).toBeGreaterThan(250);
    expect(regionMean(after, W, { x: 10, y: 10, w: 40, h: 20 }, 0)).toBeLessThan(5);
    expect(outside(before, after, { x: 10, y: 10, w: 40, h: 20 })).toBeLessThan(1.5);
  });

  test("without font_size, a mark drawn at another size is scaled to 5% of the height", async () => {
    // 300x200: the default size is 10 px, so the 40x20 mark drawn at 20 px becomes 20x10.
    const res = await engine.job("image.watermark", {
      source_url: media(FIXTURES.jpeg),
      params: { text: "x", position: "top-left", margin: 10, opacity: 1, format: "png" },
      text_mark: { png: solidPng(40, 20, [0, 0, 255, 255]).toString("base64"), font_size: 20 },
    });
    expect(res.status).toBe(200);
    const file = await saveBody(res, "text-mark-scaled.png");
    const before = await rgb(fixturePath(FIXTURES.jpeg));
    const after = await rgb(file);
    expect(regionMean(after, W, { x: 11, y: 11, w: 18, h: 8 }, 2)).toBeGreaterThan(240);
    expect(outside(before, after, { x: 9, y: 9, w: 22, h: 12 })).toBeLessThan(1.5);
  });

  test("a text watermark without text_mark, or with one that is not a PNG, is refused before it runs", async () => {
    const params = { text: "x" };
    for (const textMark of [null, { png: "aGVsbG8=", font_size: 20 }, { font_size: 0 }, "png"]) {
      const res = await engine.job("image.watermark", {
        source_url: media(FIXTURES.jpeg),
        params,
        text_mark: textMark,
      });
      expect(res.status).toBe(400);
      expect(await errorOf(res)).toMatchObject({
        code: "VALIDATION_INVALID_ARGUMENT",
        field: expect.stringMatching(/^text_mark(\.|$)/),
      });
    }
  });

  test("a text mark with nothing drawn (no png) leaves the image as it was", async () => {
    const res = await engine.job("image.watermark", {
      source_url: media(FIXTURES.jpeg),
      params: { text: " ", format: "png" },
      text_mark: { font_size: 10 },
    });
    expect(res.status).toBe(200);
    const file = await saveBody(res, "text-mark-none.png");
    const before = await rgb(fixturePath(FIXTURES.jpeg));
    expect(outside(before, await rgb(file), { x: 0, y: 0, w: 0, h: 0 })).toBeLessThan(1.5);
  });

  test.each([
    [FIXTURES.jpeg, "same", "jpeg", "mjpeg"],
    [FIXTURES.jpeg, "png", "png", "png"],
    [FIXTURES.jpeg, "webp", "webp", "webp"],
    [FIXTURES.webp, "same", "webp", "webp"],
    [FIXTURES.webp, "jpeg", "jpeg", "mjpeg"],
    [FIXTURES.logo, "same", "png", "png"],
  ])("%s as %s → %s", async (source, format, expected, codec) => {
    const { result, contentType, probe } = await watermark(
      media(source),
      { text: "©", format },
      `out.${expected}`,
    );
    expect(result.format).toBe(expected);
    expect(contentType).toBe(`image/${expected}`);
    const stream = probe.streams[0]!;
    expect(stream.codec_name).toBe(codec);
    expect([stream.width, stream.height]).toEqual([result.width, result.height]);
  });

  test("quality changes JPEG and WebP", async () => {
    for (const format of ["jpeg", "webp"]) {
      const low = await watermark(media(FIXTURES.jpeg), { text: "q", format, quality: 10 }, `low.${format}`);
      const high = await watermark(media(FIXTURES.jpeg), { text: "q", format, quality: 95 }, `hi.${format}`);
      expect(low.result.size_bytes).toBeLessThan(high.result.size_bytes / 2);
    }
  });

  test("alpha is kept in PNG and WebP; JPEG is flattened on white", async () => {
    // logo.png (160x80): opaque red left half, transparent right half.
    const params = { text: "x", position: "top-left", font_size: 10 };
    const png = await rgba((await watermark(media(FIXTURES.logo), params, "alpha.png")).file);
    expect(png[(40 * 160 + 120) * 4 + 3]).toBe(0);
    expect(png[(40 * 160 + 40) * 4 + 3]).toBe(255);
    const webp = await rgba(
      (await watermark(media(FIXTURES.logo), { ...params, format: "webp" }, "alpha.webp")).file,
    );
    expect(webp[(40 * 160 + 120) * 4 + 3]).toBeLessThan(10);
    const jpeg = await rgba(
      (await watermark(media(FIXTURES.logo), { ...params, format: "jpeg" }, "flat.jpg")).file,
    );
    const at = (x: number, y: number) => [...jpeg.subarray((y * 160 + x) * 4, (y * 160 + x) * 4 + 3)];
    for (const v of at(120, 40)) expect(v).toBeGreaterThan(245);
    expect(at(40, 40)[0]).toBeGreaterThan(230);
    expect(at(40, 40)[1]).toBeLessThan(30);
  });

  test("the params exactly as the Worker sends them (its defaults filled in)", async () => {
    const { result } = await watermark(
      media(FIXTURES.jpeg),
      {
        watermark_url: media(FIXTURES.logo),
        color: "#FFFFFF",
        position: "bottom-right",
        margin: 16,
        opacity: 0.5,
        scale: 0.2,
        format: "same",
        quality: 85,
      },
      "defaults.jpg",
    );
    expect(result).toMatchObject({ format: "jpeg", width: W, height: H });
  });

  test("a 4000×3000 JPEG (12 MP) within the limits", async () => {
    const { result, probe } = await watermark(
      media(FIXTURES.photo12mp),
      { watermark_url: media(FIXTURES.logo), format: "webp" },
      "big.webp",
    );
    expect(result).toMatchObject({ format: "webp", width: 4000, height: 3000 });
    expect(probe.streams[0]).toMatchObject({ codec_name: "webp", width: 4000, height: 3000 });
  });

  test("a header claiming 10000×10000 → 413 naming the limit, before anything is decoded", async () => {
    const commands: string[] = [];
    traceCommands((bin) => commands.push(bin));
    try {
      // A download that never ends within the test (256 KiB, then 1 KiB every 500 ms): an answer at all
      // proves the header was enough to refuse it.
      const res = await engine.job("image.watermark", {
        source_url: fixtureUrl(`/ranged/${FIXTURES.bombPng}?trickle=1`),
        params: { text: "x" },
      });
      const err = await errorOf(res);
      expect(err).toMatchObject({ status: 413, code: "REQUEST_BODY_TOO_LARGE" });
      expect(err.message).toMatch(/10000×10000.*16\.8 megapixels/);
      assertSafeMessage(err.message);
      expect(commands).toEqual([]);
    } finally {
      traceCommands(null);
    }
  });

  test.each([
    ["a video", FIXTURES.av],
    ["an animated WebP", FIXTURES.animatedWebp],
  ])("%s → 415", async (_, source) => {
    const res = await engine.job("image.watermark", { source_url: media(source), params: { text: "x" } });
    const err = await errorOf(res);
    expect(err).toMatchObject({ status: 415, code: "CONTENT_TYPE_UNSUPPORTED" });
    assertSafeMessage(err.message);
  });

  test("a source over 25 MiB → 413 naming the limit", async () => {
    const res = await engine.job("image.watermark", {
      source_url: fixtureUrl("/huge"),
      params: { text: "x" },
    });
    const err = await errorOf(res);
    expect(err).toMatchObject({ status: 413, code: "REQUEST_BODY_TOO_LARGE" });
    expect(err.message).toMatch(/25 MiB/);
  });

  test.each([
    [{ text: "x", unknown: 1 }, "params.unknown"],
    [{ text: "x", watermark_url: media(FIXTURES.logo) }, "params.text"],
    [{}, "params.watermark_url"],
    [{ text: "x", format: "gif" }, "params.format"],
    [{ text: "x", quality: 0 }, "params.quality"],
    [{ text: "x", scale: 2 }, "params.scale"],
    [{ text: "x", start: 1 }, "params.start"],
    [{ text: "x".repeat(201) }, "params.text"],
  ])("%o → 400 %s", async (params, field) => {
    const res = await engine.job("image.watermark", { source_url: media(FIXTURES.jpeg), params });
    expect(await errorOf(res)).toMatchObject({ status: 400, code: "VALIDATION_INVALID_ARGUMENT", field });
  });

  test("a text of 200 characters in 400 UTF-16 units, which the Worker's schema accepts, is watermarked", async () => {
    // The Worker and the engine validate with one schema (@p6/contract/params), which counts characters.
    const { result } = await watermark(
      media(FIXTURES.jpeg),
      { text: "😀".repeat(200), opacity: 0, format: "png" },
      "emoji-text.png",
    );
    expect(result).toMatchObject({ format: "png", width: W, height: H });
  });

  test.each([
    [3, [300, 200]],
    [6, [200, 300]],
    [8, [200, 300]],
  ])("a JPEG with EXIF orientation %i comes out turned as a viewer shows it", async (o, size) => {
    const name = `photo-orientation-${o}.jpg`;
    await writeFile(fixturePath(name), withExifOrientation(await readFile(fixturePath(FIXTURES.jpeg)), o));
    const { result, file } = await watermark(media(name), { text: "x", opacity: 0, format: "png" }, name);
    expect([result.width, result.height]).toEqual(size);
    // The source's pixels, turned by ffmpeg's own filter, are the output's (a mark with opacity 0 adds none).
    const turn = { 3: "hflip,vflip", 6: "transpose=clock", 8: "transpose=cclock" }[o]!;
    const expected = await rgba(fixturePath(FIXTURES.jpeg), "rgb24", turn);
    const got = await rgb(file);
    expect(regionDiff(got, expected, size[0]!, { x: 0, y: 0, w: size[0]!, h: size[1]! })).toBeLessThan(2);
  });

  test.each(["png", "webp"])(
    "a 2400×1200 PNG with alpha (over the Worker's 2.2 MP) keeps its transparency as %s",
    async (format) => {
      // Top half transparent, bottom half opaque blue, a translucent band at y 500..549.
      const name = "alpha-2400x1200.png";
      // Renamed into place whole: the machine's fixture folder, served to other runs and clones meanwhile.
      await publish(fixturePath(name), (out) =>
        exec(resolveBinaries(process.env).ffmpeg, [
          ...["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=blue:s=2400x1200,format=rgba"],
          ...["-vf", "geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='if(lt(Y,500),0,if(lt(Y,550),128,255))'"],
          ...["-frames:v", "1", out],
        ]),
      );
      const { result, file } = await watermark(
        media(name),
        {
          watermark_url: media(FIXTURES.logo),
          position: "top-left",
          margin: 0,
          scale: 0.1,
          opacity: 1,
          format,
        },
        `alpha-big.${format}`,
      );
      expect(result).toMatchObject({ format, width: 2400, height: 1200 });
      const px = await rgba(file);
      const alpha = (x: number, y: number) => px[(y * 2400 + x) * 4 + 3]!;
      expect(alpha(1200, 200)).toBeLessThan(5); // transparent, away from the mark
      expect(alpha(2300, 300)).toBeLessThan(5);
      expect(alpha(1200, 900)).toBeGreaterThan(250);
      expect(Math.abs(alpha(1200, 525) - 128)).toBeLessThan(16);
      // The logo (240×120 at 0,0; its left half opaque red) is drawn opaque over the transparency.
      expect(alpha(60, 60)).toBeGreaterThan(250);
      expect(px[(60 * 2400 + 60) * 4]).toBeGreaterThan(230);
      expect(alpha(180, 60)).toBeLessThan(5); // the logo's transparent half
    },
  );

  test("an APNG → 415 saying animation is not supported (not flattened to its first frame)", async () => {
    const name = "animated.png";
    const png = await readFile(fixturePath(FIXTURES.logo));
    await writeFile(fixturePath(name), withPngChunk(png, "acTL", acTL(2)));
    const err = await errorOf(
      await engine.job("image.watermark", { source_url: media(name), params: { text: "x" } }),
    );
    expect(err).toMatchObject({ status: 415, code: "CONTENT_TYPE_UNSUPPORTED" });
    expect(err.message).toMatch(/animated PNG \(APNG\); animation is not supported/);
  });

  test.each(["png", "webp"])(
    "a %s with EXIF orientation 6 (PNG eXIf, WebP EXIF chunk) comes out turned",
    async (format) => {
      const name = `photo-orientation-6.${format}`;
      const stored = fixturePath(`photo-stored.${format}`);
      await exec(resolveBinaries(process.env).ffmpeg, [
        ...["-v", "error", "-y", "-i", fixturePath(FIXTURES.jpeg), "-frames:v", "1"],
        ...(format === "webp" ? ["-c:v", "libwebp", "-lossless", "1"] : []),
        stored,
      ]);
      const bytes = new Uint8Array(await readFile(stored));
      const tiff = tiffWithOrientation(6);
      await writeFile(
        fixturePath(name),
        format === "png" ? withPngChunk(bytes, "eXIf", tiff) : withWebpExif(bytes, W, H, tiff),
      );
      const { result, file } = await watermark(media(name), { text: "x", opacity: 0, format: "png" }, name);
      expect([result.width, result.height]).toEqual([H, W]);
      const expected = await rgba(stored, "rgb24", "transpose=clock");
      expect(regionDiff(await rgb(file), expected, H, { x: 0, y: 0, w: H, h: W })).toBeLessThan(2);
    },
  );

  test("an arithmetic-coded JPEG → 415 naming the coding (ffmpeg cannot decode it)", async () => {
    const jpeg = new Uint8Array(await readFile(fixturePath(FIXTURES.jpeg)));
    const sof = jpeg.findIndex((v, i) => v === 0xff && jpeg[i + 1] === 0xc0);
    jpeg[sof + 1] = 0xc9; // SOF9: extended sequential, arithmetic
    await writeFile(fixturePath("arithmetic.jpg"), jpeg);
    const res = await engine.job("image.watermark", {
      source_url: media("arithmetic.jpg"),
      params: { text: "x" },
    });
    expect(await errorOf(res)).toMatchObject({
      status: 415,
      code: "CONTENT_TYPE_UNSUPPORTED",
      message: "the image is an arithmetic-coded JPEG, which is not supported",
    });
  });

  const formats = ["png", "jpeg", "webp"] as const;
  test.each(formats.flatMap((input) => formats.map((output) => [input, output] as const)))(
    "a Display P3 %s keeps its colour profile as %s",
    async (input, format) => {
      const name = `p3.${input}`;
      await sharp(fixturePath(FIXTURES.jpeg)).withIccProfile("p3").toFormat(input).toFile(fixturePath(name));
      const { icc } = await sharp(fixturePath(name)).metadata();
      expect(icc?.length).toBeGreaterThan(128);
      const { file } = await watermark(media(name), { text: "x", format }, `p3-out.${format}`);
      // Read back by libvips (sharp), an independent reader of each format's profile.
      expect((await sharp(file).metadata()).icc).toEqual(icc);
    },
  );

  test.each(formats)("a CMYK JPEG's CMYK profile is not carried into the RGB %s", async (format) => {
    const name = "cmyk-profile.jpg";
    await sharp(fixturePath(FIXTURES.jpeg))
      .toColourspace("cmyk")
      .keepIccProfile()
      .jpeg()
      .toFile(fixturePath(name));
    expect((await sharp(fixturePath(name)).metadata()).icc).toBeDefined();
    const { file, result } = await watermark(media(name), { text: "x", format }, `cmyk-out.${format}`);
    expect(result).toMatchObject({ width: W, height: H });
    expect((await sharp(file).metadata()).icc).toBeUndefined();
  });

  test("nothing is left in the engine's temp directory", async () => {
    const { filesUnder } = await import("./support/engine.ts");
    await engine.engine.idle();
    expect(await filesUnder(engine.engine.tmpDir)).toEqual([]);
  });
});
