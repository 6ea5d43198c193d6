import { describe, expect, it } from "vitest";
import { ImageInputError } from "../../src/images/errors";
import { readImageHeader } from "../../src/images/header";
import { watermarkImage } from "../../src/images/watermark";
import { encodeFixture, type FixtureFormat, gradient } from "./fixtures";

const ascii = (bytes: Uint8Array, from: number, to: number) =>
  String.fromCharCode(...bytes.subarray(from, to));

/** Headers that claim 10000×10000 (100 MP) and carry no image data at all. */
const HUGE = {
  png: Uint8Array.of(
    ...[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    ...[0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52],
    ...[0, 0, 0x27, 0x10, 0, 0, 0x27, 0x10, 8, 6, 0, 0, 0],
    ...[0, 0, 0, 0],
  ),
  jpeg: Uint8Array.of(
    0xff,
    0xd8,
    0xff,
    0xc0,
    0,
    17,
    8,
    0x27,
    0x10,
    0x27,
    0x10,
    3,
    1,
    0x22,
    0,
    2,
    0x11,
    1,
    3,
    0x11,
    1,
  ),
  webp: Uint8Array.of(
    ...new TextEncoder().encode("RIFF"),
    ...[22, 0, 0, 0],
    ...new TextEncoder().encode("WEBPVP8X"),
    ...[10, 0, 0, 0, 0, 0, 0, 0],
    ...[0x0f, 0x27, 0, 0x0f, 0x27, 0],
  ),
};

describe("readImageHeader", () => {
  it.each<[FixtureFormat, string, string]>([
    ["png", "png", "IHDR"],
    ["jpeg", "jpeg", ""],
    ["webp", "webp", "VP8 "],
    ["webp-lossless", "webp", "VP8L"],
    ["webp-alpha", "webp", "VP8X"],
  ])("reads %s dimensions without decoding", async (fixture, format, chunk) => {
    const bytes = await encodeFixture(gradient(333, 217), fixture);
    if (format === "webp") expect(ascii(bytes, 12, 16)).toBe(chunk);
    expect(readImageHeader(bytes)).toEqual({
      format,
      width: 333,
      height: 217,
      orientation: 1,
      alpha: expect.any(Boolean),
      animated: false,
    });
  });

  it("reads a JPEG frame header that follows APP segments", async () => {
    const jpeg = await encodeFixture(gradient(64, 48), "jpeg");
    const app1 = Uint8Array.of(0xff, 0xe1, 0, 8, ...new TextEncoder().encode("Exif!!"));
    const withApp = Uint8Array.of(...jpeg.subarray(0, 2), ...app1, ...jpeg.subarray(2));
    expect(readImageHeader(withApp)).toMatchObject({ format: "jpeg", width: 64, height: 48 });
  });

  it.each(Object.entries(HUGE))("reads a crafted %s header claiming 10000×10000", (format, bytes) => {
    expect(readImageHeader(bytes)).toMatchObject({ format, width: 10000, height: 10000 });
  });

  it("flags animated WebP", () => {
    const animated = HUGE.webp.slice();
    animated[20] = 0x02;
    expect(readImageHeader(animated)).toMatchObject({ format: "webp", animated: true });
  });

  it.each<[string, Uint8Array]>([
    ["empty", new Uint8Array()],
    ["text", new TextEncoder().encode("hello, this is not an image at all")],
    ["GIF", new TextEncoder().encode("GIF89a\x10\x00\x10\x00\x00\x00\x00 and more bytes here")],
    ["random", Uint8Array.from({ length: 64 }, (_, i) => (i * 37 + 11) & 0xff)],
    [
      "RIFF that is not WebP",
      new TextEncoder().encode("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00........."),
    ],
  ])("refuses %s", (_, bytes) => {
    expect(readImageHeader(bytes)).toBeNull();
  });

  it.each<FixtureFormat>(["png", "jpeg", "webp", "webp-lossless"])(
    "refuses a %s cut off inside its header",
    async (fixture) => {
      const bytes = await encodeFixture(gradient(40, 30), fixture);
      const headerEnd = fixture === "jpeg" ? 20 : fixture === "png" ? 20 : 24;
      expect(readImageHeader(bytes.subarray(0, headerEnd))).toBeNull();
    },
  );
});

describe("limits checked from the header alone", () => {
  const logo = () => encodeFixture(gradient(20, 10), "png");

  // Decoding any of these would fail as undecodable (415): a 413 proves the header check came first.
  it.each(Object.entries(HUGE))("refuses a 100 MP %s base with REQUEST_BODY_TOO_LARGE", async (_, bytes) => {
    const error = await watermarkImage(bytes, { text: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImageInputError);
    expect(error).toMatchObject({ code: "REQUEST_BODY_TOO_LARGE" });
    expect((error as Error).message).toMatch(/10000×10000.*16\.8 megapixels/);
  });

  it.each(Object.entries(HUGE))("refuses a 100 MP %s logo with REQUEST_BODY_TOO_LARGE", async (_, bytes) => {
    const base = await logo();
    const error = await watermarkImage(base, { watermark_url: "https://example.com/l.png" }, bytes).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      code: "REQUEST_BODY_TOO_LARGE",
      message: expect.stringMatching(/watermark/),
    });
  });

  it("refuses animated WebP as unsupported", async () => {
    const animated = HUGE.webp.slice();
    animated[20] = 0x02;
    animated[24] = animated[27] = 9; // 10×10 canvas
    animated[25] = animated[26] = animated[28] = animated[29] = 0;
    await expect(watermarkImage(animated, { text: "x" })).rejects.toMatchObject({
      code: "CONTENT_TYPE_UNSUPPORTED",
      message: expect.stringMatching(/animated/),
    });
  });

  it.each<[string, Uint8Array]>([
    ["not an image", new TextEncoder().encode("<html>not an image</html> padding padding")],
    ["a GIF", new TextEncoder().encode("GIF89a\x10\x00\x10\x00\x00\x00\x00 padding padding padding")],
  ])("refuses a base that is %s as CONTENT_TYPE_UNSUPPORTED", async (_, bytes) => {
    await expect(watermarkImage(bytes, { text: "x" })).rejects.toMatchObject({
      code: "CONTENT_TYPE_UNSUPPORTED",
    });
  });

  it.each<FixtureFormat>(["png", "jpeg", "webp", "webp-lossless", "webp-alpha"])(
    "refuses a truncated %s (header intact) as CONTENT_TYPE_UNSUPPORTED",
    async (fixture) => {
      const bytes = await encodeFixture(gradient(300, 200), fixture);
      const cut = bytes.subarray(0, Math.floor(bytes.length * 0.6));
      expect(readImageHeader(cut)).not.toBeNull();
      await expect(watermarkImage(cut, { text: "x" })).rejects.toMatchObject({
        code: "CONTENT_TYPE_UNSUPPORTED",
        message: expect.stringMatching(/truncated or cannot be decoded/),
      });
    },
  );

  it("refuses a truncated logo", async () => {
    const base = await encodeFixture(gradient(100, 100), "png");
    const logoBytes = await encodeFixture(gradient(100, 50), "jpeg");
    await expect(
      watermarkImage(base, { watermark_url: "https://example.com/l.jpg" }, logoBytes.subarray(0, 400)),
    ).rejects.toMatchObject({
      code: "CONTENT_TYPE_UNSUPPORTED",
      message: expect.stringMatching(/watermark image/),
    });
  });
});
