/**
 * A file of a kind the engine does not read is refused with 415 naming that kind (docs/decisions.md, issue 29):
 * a HEIF/HEIC still image given to image.watermark (through /v1/fetch, as the Worker asks, or as an engine job)
 * or to an audio/video operation, and a GIF given for an image. The HEIC is an ISO-BMFF file whose major
 * brand is `heic` and whose picture is an item, not a track: written here (its first boxes are all a sniff
 * reads), and ../shared/corpus/fixture-heic.heic (an iPhone photo) when that corpus is there.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CORPUS_DIR as CORPUS } from "./support/corpus.ts";
import { AUTH, errorOf, fixturePath, media, startTestEngine, type TestEngine } from "./support/engine.ts";
import { writeFileAtomic } from "./support/fixture-files.ts";
import { type FixtureServer, startFixtureServer } from "./support/fixture-server.ts";

/** ftyp (major brand heic, compatible mif1 and heic), then the start of a meta box: a HEIC's first bytes. */
const HEIC_HEAD = Buffer.concat([
  Buffer.from([0, 0, 0, 0x18]),
  Buffer.from("ftypheic\0\0\0\0mif1heic", "latin1"),
  Buffer.from([0, 0, 0, 0x22]),
  Buffer.from("meta\0\0\0\0\0\0\0\x21hdlr\0\0\0\0\0\0\0\0pict\0\0\0\0\0\0\0\0\0\0\0\0\0", "latin1"),
]);
const GIF_HEAD = Buffer.from(
  "GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;",
  "latin1",
);

let engine: TestEngine;
let corpus: FixtureServer | null = null;

beforeAll(async () => {
  // Written whole into the machine's fixture folder, which other runs and clones serve at the same time.
  await writeFileAtomic(fixturePath("named-still.heic"), HEIC_HEAD);
  await writeFileAtomic(fixturePath("named-still.gif"), GIF_HEAD);
  engine = await startTestEngine();
  // The corpus is read in place: a fixture server over its directory.
  if (existsSync(path.join(CORPUS, "fixture-heic.heic"))) corpus = await startFixtureServer(CORPUS);
  else console.log(`skipped: ${CORPUS}/fixture-heic.heic is not there`);
});
afterAll(async () => {
  await engine.close();
  await corpus?.close();
});

const heicSources = () => [
  media("named-still.heic"),
  ...(corpus ? [corpus.url("/media/fixture-heic.heic")] : []),
];

const fetchSource = (body: Record<string, unknown>) =>
  fetch(`${engine.url}/v1/fetch`, {
    method: "POST",
    headers: { ...AUTH, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("a refusal names what the file is", () => {
  test("/v1/fetch for an image (the Worker's image.watermark source or logo): HEIC and GIF", async () => {
    for (const source of heicSources()) {
      expect(await errorOf(await fetchSource({ source_url: source, accept: ["image"] }))).toMatchObject({
        status: 415,
        code: "CONTENT_TYPE_UNSUPPORTED",
        message: "the source is a HEIF/HEIC image; PNG, JPEG and WebP are supported",
      });
    }
    expect(
      await errorOf(await fetchSource({ source_url: media("named-still.gif"), accept: ["image"] })),
    ).toMatchObject({ status: 415, message: "the source is a GIF; PNG, JPEG and WebP are supported" });
  });

  test("the engine's image.watermark job", async () => {
    for (const source of heicSources()) {
      const res = await engine.job("image.watermark", {
        source_url: source,
        params: { watermark_url: media("logo.png") },
      });
      expect(await errorOf(res)).toMatchObject({
        status: 415,
        message: "the source is a HEIF/HEIC image; PNG, JPEG and WebP are supported",
      });
    }
  });

  test.each([
    ["video.probe", {}],
    ["video.extract-cover", {}],
    ["video.trim", { start: 0, end: 1 }],
    ["audio.trim", { start: 0, end: 1 }],
    ["video.extract-audio", {}],
  ])("%s of a HEIC", async (type, params) => {
    for (const source of heicSources()) {
      expect(await errorOf(await engine.job(type, { source_url: source, params }))).toMatchObject({
        status: 415,
        code: "CONTENT_TYPE_UNSUPPORTED",
        message: "the source is a HEIF/HEIC image, not audio or video",
      });
    }
  });
});
