/** Media sniffing from content, image headers, and the MP4 truncation check. */
import { readFile } from "node:fs/promises";
import { imageSize, mp4Truncation, sniff } from "@p6/contract/sniff";
import { describe, expect, test } from "vitest";
import { coverSize } from "../src/pipeline/extract-cover.ts";
import { reduceRate } from "../src/pipeline/media-info.ts";
import { escapeFilterValue } from "../src/pipeline/watermark.ts";
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
