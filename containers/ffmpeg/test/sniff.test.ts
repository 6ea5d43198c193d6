/** Media sniffing from content, image headers, and the MP4 truncation check. */
import { readFile } from "node:fs/promises";
import { imageSize, mp4Truncation, SIGNATURES, sniff } from "@p6/contract/sniff";
import { describe, expect, test } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import { coverSize } from "../src/pipeline/extract-cover.ts";
import { reduceRate } from "../src/pipeline/media-info.ts";
import { escapeFilterValue } from "../src/pipeline/watermark.ts";
import { ensureFile } from "./matrix/files.ts";
import { RECIPES } from "./matrix/recipes.ts";
import { fixturePath } from "./support/engine.ts";
import { FIXTURES } from "./support/media.ts";

const head = async (name: string) => (await readFile(fixturePath(name))).subarray(0, 65536);

describe("sniff", () => {
  test.each([
    [FIXTURES.av, "av", "mp4", "mov"],
    [FIXTURES.avTail, "av", "mp4", "mov"],
    [FIXTURES.alpha, "av", "webm", "matroska"],
    [FIXTURES.mp3, "audio", "mp3", "mp3"],
    [FIXTURES.wav, "audio", "wav", "wav"],
    [FIXTURES.logo, "image", "png", "png_pipe"],
    [FIXTURES.jpeg, "image", "jpeg", "jpeg_pipe"],
    [FIXTURES.webp, "image", "webp", "webp_pipe"],
  ])("%s → %s/%s", async (name, kind, format, demuxer) => {
    expect(sniff(await head(name))).toEqual({ kind, format, demuxer });
  });

  test.each([
    ["a text file named .mp4", Buffer.from("This is not a video")],
    ["an HLS playlist", Buffer.from("#EXTM3U\n#EXT-X-VERSION:3\nhttp://169.254.169.254/x.ts\n")],
    ["an ffconcat list", Buffer.from("ffconcat version 1.0\nfile '/etc/passwd'\n")],
    ["HTML", Buffer.from("<!doctype html><html></html>")],
    ["a GIF", Buffer.from("GIF89a\x01\x00\x01\x00")],
    ["empty", Buffer.alloc(0)],
  ])("refuses %s", (_, bytes) => {
    expect(sniff(bytes)).toBeNull();
  });
});

/** One generated file (the media matrix's, test/matrix) per entry of the signature table, and what it sniffs as. */
const BY_SIGNATURE: Record<string, [file: string, format: string, kind: string][]> = {
  mp4: [
    ["h264-aac.mp4", "mp4", "av"],
    ["h264-pcm.mov", "mov", "av"],
    ["aac.m4a", "m4a", "audio"],
    ["h264-aac-frag.mp4", "mp4", "av"],
  ],
  mkv: [
    ["h264-aac.mkv", "mkv", "av"],
    ["vp9-opus.webm", "webm", "av"],
  ],
  avi: [["mpeg4-mp3.avi", "avi", "av"]],
  flv: [["h264-aac.flv", "flv", "av"]],
  mpegts: [["h264-aac.ts", "mpegts", "av"]],
  m2ts: [["h264-ac3.m2ts", "m2ts", "av"]],
  ogg: [
    ["theora-vorbis.ogv", "ogg", "av"],
    ["audio.opus", "ogg", "av"],
  ],
  wav: [["pcm16.wav", "wav", "audio"]],
  aiff: [
    ["pcm16.aiff", "aiff", "audio"],
    ["ulaw.aifc", "aiff", "audio"],
  ],
  caf: [
    ["pcm16.caf", "caf", "audio"],
    ["alac.caf", "caf", "audio"],
  ],
  flac: [["audio.flac", "flac", "audio"]],
  aac: [["audio.aac", "aac", "audio"]],
  mp3: [
    ["cbr-lame.mp3", "mp3", "audio"],
    ["vbr.mp3", "mp3", "audio"],
  ],
};

describe("the signature table", () => {
  const bins = resolveBinaries(process.env);
  const media = SIGNATURES.filter((s) => s.kind !== "image");
  test("every audio/video signature has a generated file here", () => {
    expect(Object.keys(BY_SIGNATURE).sort()).toEqual(media.map((s) => s.format).sort());
  });
  test.each(Object.entries(BY_SIGNATURE).flatMap(([sig, files]) => files.map((f) => [sig, ...f] as const)))(
    "%s: %s sniffs as %s (%s)",
    { timeout: 120_000 },
    async (sig, file, format, kind) => {
      const recipe = RECIPES.find((r) => r.name === file)!;
      const made = await ensureFile(bins, recipe);
      if (!("file" in made)) throw new Error(made.error);
      const bytes = (await readFile(made.file)).subarray(0, 65536);
      const demuxer = SIGNATURES.find((s) => s.format === sig)!.demuxer;
      expect(sniff(bytes)).toEqual({ kind, format, demuxer });
    },
  );
});

describe("imageSize", () => {
  test.each([
    [FIXTURES.logo, 160, 80],
    [FIXTURES.jpeg, 300, 200],
    [FIXTURES.webp, 300, 200],
  ])("%s is %ix%i", async (name, width, height) => {
    expect(imageSize(await head(name))).toEqual({ width, height });
  });
});

describe("mp4Truncation", () => {
  const check = async (name: string) => {
    const bytes = await readFile(fixturePath(name));
    return mp4Truncation(async (o, l) => bytes.subarray(o, o + l), bytes.length, 1 << 24);
  };
  test("whole files pass", async () => {
    expect(await check(FIXTURES.av)).toBeNull();
    expect(await check(FIXTURES.avTail)).toBeNull();
  });
  test("cut files are caught with or without faststart", async () => {
    expect(await check(FIXTURES.truncated)).toMatch(/mdat box is cut short/);
    expect(await check(FIXTURES.truncatedFaststart)).toMatch(/mdat box is cut short/);
  });
});

describe("helpers", () => {
  test.each([
    ["30/1", "30/1"],
    ["60000/2002", "30000/1001"],
    ["2997/100", "2997/100"],
    ["0/0", null],
    ["N/A", null],
  ])("reduceRate(%s) = %s", (rate, reduced) => {
    expect(reduceRate(rate)).toBe(reduced);
  });

  test.each([
    [640, 360, undefined, undefined, 640, 360],
    [640, 360, 320, undefined, 320, 180],
    [640, 360, undefined, 90, 160, 90],
    [640, 360, 300, 300, 300, 169],
    [640, 360, 1280, 100, 178, 100],
    [360, 640, 100, 100, 56, 100],
  ])("coverSize(%i, %i, %s, %s) = %ix%i", (w, h, width, height, ew, eh) => {
    expect(coverSize(w, h, width, height)).toEqual({ width: ew, height: eh });
  });

  test("filter values are escaped for both levels", () => {
    expect(escapeFilterValue("/a/b.ttf")).toBe("/a/b.ttf");
    expect(escapeFilterValue("C:\\x'y,[z];")).toBe("C\\\\:\\\\\\\\x\\\\\\'y\\,\\[z\\]\\;");
  });
});
