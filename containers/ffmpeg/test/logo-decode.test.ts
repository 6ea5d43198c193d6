/**
 * video.watermark with a logo whose header reads but whose image data does not decode: refused 415, not a
 * 200 with the video unmarked (ffmpeg's overlay passes the frames through when its second input yields no
 * frame, and exits 0). image.watermark refuses the same logos (-xerror, image-watermark.ts).
 */
import { readFile } from "node:fs/promises";
import { deflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { errorOf, fixturePath, media, startTestEngine, type TestEngine } from "./support/engine.ts";
import { writeFileAtomic } from "./support/fixture-files.ts";
import { FIXTURES } from "./support/media.ts";
import { pngChunk } from "./support/text-mark.ts";

let engine: TestEngine;
beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine.close());

/** A 64×32 RGBA PNG whose IDAT inflates to a fifth of the rows its header promises (CRCs right). */
function shortPng(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(64, 0);
  ihdr.writeUInt32BE(32, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const rows = Buffer.alloc((1 + 64 * 4) * 6, 0x7f);
  for (let r = 0; r < 6; r++) rows[r * (1 + 64 * 4)] = 0;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", deflateSync(rows)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A 64×32 RGBA PNG whose IDAT is not zlib data at all. */
function garbagePng(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(64, 0);
  ihdr.writeUInt32BE(32, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", Buffer.alloc(200, 0xa5)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

describe("a watermark logo that does not decode", () => {
  test.each([
    ["garbage-idat-logo.png", async () => garbagePng()],
    ["short-idat-logo.png", async () => shortPng()],
    // The photo's header and its first tenth of scan data: ffmpeg's decoder greys the rest and exits 0.
    [
      "truncated-logo.jpg",
      async () => {
        const jpeg = await readFile(fixturePath(FIXTURES.jpeg));
        return jpeg.subarray(0, Math.floor(jpeg.length / 10));
      },
    ],
  ])("%s → 415 on video.watermark, as on image.watermark", async (name, make) => {
    await writeFileAtomic(fixturePath(name), await make());
    const answers = [];
    for (const [type, source] of [
      ["video.watermark", FIXTURES.av],
      ["image.watermark", FIXTURES.jpeg],
    ] as const) {
      const res = await engine.job(type, {
        source_url: media(source),
        params: { watermark_url: media(name) },
      });
      answers.push({ type, ...(res.ok ? { status: res.status } : await errorOf(res)) });
    }
    expect(answers).toMatchObject(
      ["video.watermark", "image.watermark"].map((type) => ({
        type,
        status: 415,
        code: "CONTENT_TYPE_UNSUPPORTED",
      })),
    );
  });
});
