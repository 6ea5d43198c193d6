/**
 * A Matroska/WebM fast trim ends exactly at `end` (issue 29, class B): the last frame copied is declared to
 * last until `end` by its BlockDuration. Before, ffmpeg 5.1's Matroska muxer wrote it as a SimpleBlock without
 * one, so it lasted the track's DefaultDuration, a whole frame: annex-b-avc.mkv {10.569, 21.137} showed its
 * last frame until 15.329 s for a window ending at 15.316 s.
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
