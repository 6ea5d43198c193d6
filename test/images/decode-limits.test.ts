import { describe, expect, it } from "vitest";
import { decodeImage } from "../../src/images/codecs";
import { DecodeLimitError } from "../../src/images/errors";
import { decodePng, inflate } from "../../src/images/png";
import { newAccount, problem } from "../helpers/api";
import { media, operate } from "../helpers/media";
import { encodeFixture, gradient } from "./fixtures";

/**
 * Decoded-size limits inside the Worker (issue 13): the 1×1 PNG whose 1 MB IDAT of deflated zeros inflates to
 * 1 GiB, and headers beyond the pixel cap, are refused before the output is produced or allocated.
 */

const bomb = async () => new Uint8Array(await (await fetch(media("inflate-bomb.png"))).arrayBuffer());

/** The concatenated IDAT payloads of a PNG. */
function idatOf(png: Uint8Array): Uint8Array {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const parts: Uint8Array[] = [];
  for (let o = 8; o + 12 <= png.length; ) {
    const length = view.getUint32(o);
    const type = String.fromCharCode(...png.subarray(o + 4, o + 8));
    if (type === "IDAT") parts.push(png.subarray(o + 8, o + 8 + length));
    o += 12 + length;
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

describe("the inflater stops at the expected size", () => {
  it("refuses the bomb after reading a few KiB of its 1 MB, never holding more than the expected bytes", async () => {
    const data = idatOf(await bomb());
    expect(data.length).toBeGreaterThan(1_000_000);
    const pieces = Array.from({ length: Math.ceil(data.length / 8192) }, (_, i) =>
      data.subarray(i * 8192, (i + 1) * 8192),
    );
    let pulled = 0;
    const counted: Iterable<Uint8Array> = {
      *[Symbol.iterator]() {
        for (const piece of pieces) {
          pulled++;
          yield piece;
        }
      },
    };
    let delivered = 0;
    const error = await inflate(counted, 4, (piece) => {
      delivered += piece.length;
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DecodeLimitError);
    expect(error).toMatchObject({ code: "CONTENT_TYPE_UNSUPPORTED" });
    expect((error as Error).message).toMatch(/inflates beyond the 4 bytes/);
    expect(delivered).toBeLessThanOrEqual(4);
    // The compressed input was not read to its end: inflation stopped within the first slices.
    expect(pulled).toBeLessThan(4);
    expect(pieces.length).toBeGreaterThan(100);
  });

  it("passes a stream that inflates to exactly the expected size", async () => {
    const png = await encodeFixture(gradient(33, 17), "png");
    const decoded = await decodePng(png);
    expect([decoded.width, decoded.height]).toEqual([33, 17]);
  });

  it("decodePng refuses the 1×1 bomb as malformed (415)", async () => {
    await expect(decodePng(await bomb())).rejects.toMatchObject({
      name: "DecodeLimitError",
      code: "CONTENT_TYPE_UNSUPPORTED",
    });
  });
});

describe("the pixel cap is checked before any codec allocates", () => {
  it.each(["png", "jpeg", "webp"] as const)("%s beyond maxPixels: 413", async (format) => {
    const bytes = await encodeFixture(gradient(40, 30), format);
    const error = await decodeImage(format, bytes, 1000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DecodeLimitError);
    expect(error).toMatchObject({ code: "REQUEST_BODY_TOO_LARGE" });
    expect((error as Error).message).toMatch(/40×30.*limit is 0\.001 megapixels/);
    // Within the cap the same bytes decode.
    expect((await decodeImage(format, bytes, 1200)).width).toBe(40);
  });
});

describe("POST /v1/image/watermark with the bomb", () => {
  it("as the source: 415 naming the image", async () => {
    const { key } = await newAccount({ credits: 10 });
    const response = await operate("/v1/image/watermark", key, {
      source_url: media("inflate-bomb.png"),
      params: { text: "x" },
    });
    expect(response.status).toBe(415);
    const body = await problem(response);
    expect(body.code).toBe("CONTENT_TYPE_UNSUPPORTED");
    expect(body.detail).toMatch(/^The image is malformed: its compressed image data inflates beyond/);
  });

  it("as the logo: 415 naming the watermark image", async () => {
    const { key } = await newAccount({ credits: 10 });
    const response = await operate("/v1/image/watermark", key, {
      source_url: media("logo.png"),
      params: { watermark_url: media("inflate-bomb.png") },
    });
    expect(response.status).toBe(415);
    const body = await problem(response);
    expect(body.code).toBe("CONTENT_TYPE_UNSUPPORTED");
    expect(body.detail).toMatch(/^The watermark image is malformed: .*inflates beyond/);
  });
});
