/**
 * EXIF orientation (src/images/orientation.ts) of JPEG (APP1), PNG (eXIf) and WebP (EXIF chunk) sources: read
 * from the header, and the pixels turned before the mark is drawn, so the output (which carries no EXIF) shows
 * the image as it is meant to be seen (decisions.md, "Images", for WebP, which Chromium shows unturned).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { readImageHeader } from "../../src/images/header";
import { applyOrientation, exifOrientation } from "../../src/images/orientation";
import type { Rgba } from "../../src/images/rgba";
import { watermarkImage } from "../../src/images/watermark";
import { tiffWithOrientation, withExifOrientation, withPngChunk, withWebpExif } from "./exif";
import { decodeOutput, encodeFixture, gradient } from "./fixtures";

/** A 3×2 image whose pixels are numbered 1…6 in their red channel, row by row. */
function numbered(): Rgba {
  const data = new Uint8ClampedArray(3 * 2 * 4);
  for (let i = 0; i < 6; i++) data.set([i + 1, 0, 0, 255], i * 4);
  return { data, width: 3, height: 2 };
}
const rows = (image: Rgba) =>
  Array.from({ length: image.height }, (_, y) =>
    Array.from({ length: image.width }, (_, x) => image.data[(y * image.width + x) * 4]),
  );

describe("EXIF orientation", () => {
  let jpeg: Uint8Array;
  beforeAll(async () => {
    jpeg = await encodeFixture(gradient(40, 20), "jpeg");
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8])("orientation %i is read in both byte orders", (o) => {
    for (const order of ["II", "MM"] as const) {
      expect(readImageHeader(withExifOrientation(jpeg, o, order))).toMatchObject({
        format: "jpeg",
        width: 40,
        height: 20,
        orientation: o,
      });
    }
  });

  it("no EXIF, another APP1, or a value out of range: 1", () => {
    expect(readImageHeader(jpeg)?.orientation).toBe(1);
    expect(readImageHeader(withExifOrientation(jpeg, 9))?.orientation).toBe(1);
    expect(exifOrientation(new TextEncoder().encode("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta/>"))).toBe(1);
    expect(exifOrientation(new Uint8Array([0x45, 0x78, 0x69, 0x66, 0, 0, 0x4d, 0x4d, 0, 42]))).toBe(1);
  });

  it.each([
    [
      1,
      [
        [1, 2, 3],
        [4, 5, 6],
      ],
    ],
    [
      2,
      [
        [3, 2, 1],
        [6, 5, 4],
      ],
    ],
    [
      3,
      [
        [6, 5, 4],
        [3, 2, 1],
      ],
    ],
    [
      4,
      [
        [4, 5, 6],
        [1, 2, 3],
      ],
    ],
    [
      5,
      [
        [1, 4],
        [2, 5],
        [3, 6],
      ],
    ],
    [
      6,
      [
        [4, 1],
        [5, 2],
        [6, 3],
      ],
    ],
    [
      7,
      [
        [6, 3],
        [5, 2],
        [4, 1],
      ],
    ],
    [
      8,
      [
        [3, 6],
        [2, 5],
        [1, 4],
      ],
    ],
  ] as const)("orientation %i turns the pixels as a viewer shows them", (o, expected) => {
    expect(rows(applyOrientation(numbered(), o))).toEqual(expected);
  });

  it("a JPEG turned a quarter comes out turned, and the mark lands in the corner the client sees", async () => {
    const base = gradient(400, 300);
    const stored = await encodeFixture(base, "jpeg");
    const out = await watermarkImage(withExifOrientation(stored, 6), {
      text: "x",
      opacity: 0,
      format: "png",
    });
    expect([out.width, out.height]).toEqual([300, 400]);
    const image = await decodeOutput(out.bytes);
    const red = (x: number, y: number) => image.data[(y * image.width + x) * 4]!;
    const green = (x: number, y: number) => image.data[(y * image.width + x) * 4 + 1]!;
    // Turned clockwise: the stored top-left (dark red, dark green) is now top-right; the stored
    // top-right (bright red) bottom-right; the stored bottom-left (bright green) top-left.
    expect(red(299, 0)).toBeLessThan(60);
    expect(green(299, 0)).toBeLessThan(60);
    expect(red(299, 399)).toBeGreaterThan(180);
    expect(green(0, 0)).toBeGreaterThan(180);

    const marked = await watermarkImage(withExifOrientation(stored, 6), {
      text: "MARK",
      font_size: 40,
      color: "#FF00FF",
      opacity: 1,
      position: "bottom-right",
      format: "png",
    });
    const withMark = await decodeOutput(marked.bytes);
    const magenta = (img: Rgba, x0: number, y0: number, w: number, h: number) => {
      let n = 0;
      for (let y = y0; y < y0 + h; y++) {
        for (let x = x0; x < x0 + w; x++) {
          const i = (y * img.width + x) * 4;
          if (img.data[i]! > 200 && img.data[i + 1]! < 60 && img.data[i + 2]! > 200) n++;
        }
      }
      return n;
    };
    expect(magenta(withMark, 150, 300, 150, 100)).toBeGreaterThan(50); // bottom-right of the 300×400 output
    expect(magenta(withMark, 0, 0, 150, 300)).toBe(0);
  });
});

describe("EXIF orientation of PNG (eXIf) and WebP (EXIF chunk)", () => {
  const base = gradient(400, 300);
  const turned = (format: "png" | "webp", o: number, order: "II" | "MM" = "MM") =>
    encodeFixture(base, format).then((stored) =>
      format === "png"
        ? withPngChunk(stored, "eXIf", tiffWithOrientation(o, order))
        : withWebpExif(stored, 400, 300, tiffWithOrientation(o, order)),
    );

  it.each(["png", "webp"] as const)("%s: the orientation is read in both byte orders", async (format) => {
    for (const order of ["II", "MM"] as const) {
      for (const o of [1, 3, 6, 8]) {
        expect(readImageHeader(await turned(format, o, order))).toEqual({
          format,
          width: 400,
          height: 300,
          orientation: o,
          // jSquash writes every PNG as RGBA (colour type 6): an alpha channel, though opaque.
          alpha: format === "png",
          animated: false,
        });
      }
    }
  });

  it.each(["png", "webp"] as const)(
    "%s turned a quarter: the output is turned, the mark in the corner asked for",
    async (format) => {
      const out = await watermarkImage(
        await turned(format, 6),
        {
          watermark_url: "https://example.com/logo.png",
          position: "top-left",
          margin: 0,
          scale: 0.25,
          opacity: 1,
          format: "png",
        },
        await encodeFixture({ width: 10, height: 10, data: new Uint8ClampedArray(400).fill(255) }, "png"),
      );
      expect([out.width, out.height]).toEqual([300, 400]);
      const image = await decodeOutput(out.bytes);
      const px = (x: number, y: number) => [...image.data.subarray((y * 300 + x) * 4, (y * 300 + x) * 4 + 3)];
      // The white 75×75 mark at the top-left of the turned image, and no white at its top-right.
      expect(px(10, 10)).toEqual([255, 255, 255]);
      expect(px(70, 70)).toEqual([255, 255, 255]);
      expect(Math.min(...px(290, 10))).toBeLessThan(200);
      // Turned clockwise: the stored top-left (dark red and green) is now top-right, the stored left edge
      // (green rising downwards) the top edge (green falling rightwards), the stored top edge (red rising
      // rightwards) the right edge (red rising downwards).
      expect(px(299, 5)[0]).toBeLessThan(50);
      expect(px(299, 5)[1]).toBeLessThan(50);
      expect(px(100, 0)[1]! - px(280, 0)[1]!).toBeGreaterThan(80);
      expect(px(299, 390)[0]! - px(299, 100)[0]!).toBeGreaterThan(100);
    },
  );
});
