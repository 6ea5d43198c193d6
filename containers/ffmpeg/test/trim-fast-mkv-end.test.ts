/**
 * A Matroska/WebM fast trim ends exactly at `end` (issue 29, class B): the last frame copied is declared to
 * last until `end` by its BlockDuration. Before, ffmpeg 5.1's Matroska muxer wrote it as a SimpleBlock without
 * one, so it lasted the track's DefaultDuration, a whole frame: annex-b-avc.mkv {10.569, 21.137} showed its
 * last frame until 15.329 s for a window ending at 15.316 s. A B-frame stream whose copy, cut in decode order,
 * would lose a frame shown before `end` is encoded again instead: the copy dropped it (matroska-test5-short.mkv
 * {0.605, 1.21}: its 1.208 s frame), and its pictures are compared with the source's by PSNR.
 *
 * Expected results are computed from the source by their own route: its decoded frames (times and each
 * picture's MD5) over [keyframe, end); the output is decoded frame by frame and compared, and the last
 * frame's end read from the decoder's own frame duration (ffprobe -show_frames).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import type { EngineResult } from "../src/protocol.ts";
import { audioPresented, decodesCleanly } from "./corpus/measure.ts";
import { fixturePath, media, saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { ensureFixtures, ffmpeg } from "./support/ffmpeg-fixture.ts";
import { decodedFrames } from "./support/frames.ts";

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);

/**
 * VP8 alone in WebM, 30 fps, a keyframe every second, 3 s. Not with Opus: its cut is re-encoded with a 6.5 ms
 * encoder delay that ffmpeg 5.1's WebM muxer shifts every stream by (open, docs/media-support.md).
 */
const WEBM = "fast-end-vp8-alone.webm";
/** H.264 (no B-frames) + AAC in Matroska, 30 fps, a keyframe every second, 3 s. */
const MKV = "fast-end-h264.mkv";
/** H.264 with a B-frame between references, alone in Matroska, 24 fps, a keyframe every second, 3 s. */
const BFRAMES = "fast-end-h264-bframe.mkv";

let engine: TestEngine;
beforeAll(async () => {
  const sources = [
    ...["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30:duration=3"],
    ...["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3"],
  ];
  await ensureFixtures({
    [WEBM]: (out) =>
      ffmpeg([
        ...sources.slice(0, 4),
        ...["-c:v", "libvpx", "-b:v", "500k", "-g", "30", "-keyint_min", "30", "-auto-alt-ref", "0", out],
      ]),
    [MKV]: (out) =>
      ffmpeg([
        ...sources,
        ...["-c:v", "libx264", "-preset", "veryfast", "-bf", "0", "-g", "30", "-sc_threshold", "0"],
        ...["-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", out],
      ]),
    [BFRAMES]: (out) =>
      ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=24:duration=3"],
        ...["-c:v", "libx264", "-preset", "veryfast", "-bf", "1", "-b_strategy", "0", "-g", "24"],
        ...["-sc_threshold", "0", "-pix_fmt", "yuv420p", out],
      ]),
  });
  engine = await startTestEngine();
}, 120_000);
afterAll(async () => {
  await engine.close();
});

/** The last key packet presented at or before `at`, by the source's own packet flags. */
async function keyframeAtOrBefore(file: string, at: number): Promise<number> {
  const { stdout } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,flags"],
    ...["-of", "csv=p=0", file],
  ]);
  const keys = stdout
    .split("\n")
    .map((l) => l.split(","))
    .filter(([t, flags]) => flags?.startsWith("K") && Number(t) <= at + 1e-6)
    .map(([t]) => Number(t));
  return Math.max(...keys);
}

async function expectExactEnd(name: string, start: number, end: number, format: string) {
  const res = await engine.job("video.trim", {
    source_url: media(name),
    params: { start, end, mode: "fast" },
  });
  expect(res.status).toBe(200);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  const file = await saveBody(res, `fast-mkv-end.${result.format}`);
  expect(result).toMatchObject({ format, copied: true });
  // The copy starts at the keyframe at or before start, by the source's own packet flags. The sources' audio
  // starts before 0 (the encoder delay), their video a little after: times count from the file's 0.
  const key = await keyframeAtOrBefore(fixturePath(name), start);
  expect(result.start).toBeCloseTo(key, 3);
  const want = (await decodedFrames(fixturePath(name))).filter((f) => f.t >= key - 1e-6 && f.t < end - 1e-6);
  const got = await decodedFrames(file);
  expect(got.map((f) => f.md5)).toEqual(want.map((f) => f.md5));
  for (const [i, f] of got.entries()) expect(Math.abs(f.t - (want[i]!.t - key))).toBeLessThan(0.0015);
  // The last frame lasts until end − keyframe, as its block declares: not a whole frame past it.
  const last = got.at(-1)!;
  expect(Math.abs(last.t + last.duration - (end - key))).toBeLessThan(0.0015);
  expect(Math.abs((result.duration ?? 0) - (end - key))).toBeLessThan(0.0015);
  expect(await decodesCleanly(bins, file)).toBeNull();
  // The audio covers the same window (FLAC: to the sample, give or take a millisecond).
  const audio = await audioPresented(bins, file);
  if (audio !== null) expect(Math.abs(audio - (end - key))).toBeLessThan(0.002);
  return got;
}

describe("video.trim fast of Matroska/WebM ends at end", () => {
  // 2.45 lies between the frames at 2.433 and 2.467: the 2.433 frame is held for 16.7 ms, not 33.3.
  test("VP8 WebM {1.2, 2.45}: the last frame's block lasts until end", {
    timeout: 120_000,
  }, async () => {
    expect((await expectExactEnd(WEBM, 1.2, 2.45, "webm")).length).toBeGreaterThan(40);
  });
  test("H.264 + AAC Matroska {1.2, 2.45}: the last frame's block lasts until end", {
    timeout: 120_000,
  }, async () => {
    expect((await expectExactEnd(MKV, 1.2, 2.45, "mkv")).length).toBeGreaterThan(40);
  });
});

/** Every frame of a video decoded to 128×72 gray, in presentation order. */
async function grayPictures(file: string): Promise<Buffer[]> {
  const { stdout } = await exec(
    bins.ffmpeg,
    [
      ...["-v", "error", "-i", file, "-map", "0:v:0", "-fps_mode", "passthrough"],
      ...["-vf", "scale=128:72,format=gray", "-f", "rawvideo", "-"],
    ],
    { encoding: "buffer", maxBuffer: 256 * 1024 * 1024 },
  );
  const size = 128 * 72;
  return Array.from({ length: Math.floor(stdout.length / size) }, (_, i) =>
    stdout.subarray(i * size, (i + 1) * size),
  );
}

function psnr(a: Buffer, b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i]! - b[i]!) ** 2;
  return sum === 0 ? 99 : 10 * Math.log10((255 * 255) / (sum / a.length));
}

/**
 * The first B-frame after `after` s, by the source's packets in decode order: a packet presented before the
 * one decoded just before it (a reference frame presented later).
 */
async function bFrameAfter(file: string, after: number): Promise<number> {
  const { stdout } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", file],
  ]);
  const times = stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map(Number);
  const i = times.findIndex((t, j) => j > 0 && t > after && t < times[j - 1]!);
  expect(i).toBeGreaterThan(0);
  return times[i]!;
}

describe("video.trim fast of B-frame Matroska presents every frame up to end", () => {
  // `end` just after a B-frame, whose reference frame is presented after `end` and decoded before it: a copy
  // cut in decode order lost that B-frame (matroska-test5-short.mkv {0.605, 1.21}: the 1.208 s frame).
  async function expectEveryFrame(url: string, source: string, start: number, end: number) {
    const res = await engine.job("video.trim", { source_url: url, params: { start, end, mode: "fast" } });
    expect(res.status, await res.clone().text()).toBe(200);
    const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
    const file = await saveBody(res, `fast-bframes.${result.format}`);
    const from = result.start ?? Number.NaN;
    // What a player presents of the source over [from, end): the frame shown at `from`, then every frame
    // presented before `end`, each at its time − from.
    const src = await decodedFrames(source);
    const firstShown = src.findLastIndex((f) => f.t <= from + 1e-6);
    const want = src.map((f, i) => ({ ...f, i })).filter((f, i) => i >= firstShown && f.t < end - 1e-6);
    const got = await decodedFrames(file);
    expect(got.map((f) => f.t.toFixed(3))).toEqual(want.map((f, k) => (k === 0 ? 0 : f.t - from).toFixed(3)));
    const last = got.at(-1)!;
    expect(Math.abs(last.t + last.duration - (end - from))).toBeLessThan(0.0015);
    // Each picture is its source frame's (copied: the same; encoded again: far closer to it than to the
    // frames beside it).
    const [srcPictures, outPictures] = await Promise.all([grayPictures(source), grayPictures(file)]);
    for (const [k, f] of want.entries()) {
      const own = psnr(outPictures[k]!, srcPictures[f.i]!);
      expect(own, `frame ${k} (source ${f.t} s)`).toBeGreaterThan(30);
      for (const other of [f.i - 1, f.i + 1].filter((j) => j >= 0 && j < srcPictures.length)) {
        expect(own, `frame ${k} against source frame ${other}`).toBeGreaterThan(
          psnr(outPictures[k]!, srcPictures[other]!),
        );
      }
    }
    expect(await decodesCleanly(bins, file)).toBeNull();
    return { result, frames: got.length };
  }

  test("generated H.264 with B-frames in Matroska, `end` just after a B-frame", {
    timeout: 120_000,
  }, async () => {
    // From the keyframe at 0, as the corpus file's (a copy seeked to a later keyframe of a B-frame stream
    // holds negative times, which ffprobe cannot read back from Matroska: encoded again before too).
    const end = (await bFrameAfter(fixturePath(BFRAMES), 1.5)) + 0.002;
    const { frames } = await expectEveryFrame(media(BFRAMES), fixturePath(BFRAMES), 0.6, end);
    expect(frames).toBeGreaterThan(20);
  });
});
