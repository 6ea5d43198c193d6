/**
 * video.extract-cover gives the frame a player shows at `time` (issue 29): the last one presented at or
 * before it. Between two frame times that is the earlier one (ffmpeg's input `-ss` alone gave the later
 * one); exactly on a frame time, that frame. The expected frame is found from the source alone: ffprobe
 * lists its frames' presentation times, ffmpeg decodes them in order from the start (no seek), and the cover
 * must equal the one with the largest time <= `time`, on a generated 1 fps video whose every frame differs
 * (testsrc2 with B-frames) and on two corpus files (sample_640x360.mov, H.264 at 29.97 fps with B-frames;
 * av1-aac.mp4, AV1 at 25 fps), and inside a frame held longer than the decode before `time` looks back
 * (cursed-vfr.mp4, variable rate).
 *
 * At a time after which no frame starts (class H): the frame a player shows then is the last one before it,
 * still on screen; the cover is that frame, not a 415. Two sources: a video
 * of 1 s beside audio of 5 s (the container's duration is the audio's), generated here, and
 * ../shared/corpus/small-webm.webm (8×8, one VP8 frame at 0, the segment stating 1 s, no frame rate: its
 * default cover time, the middle, 0.5 s, has no frame at or after it) when that corpus is there. The
 * expected pixels are ffmpeg's own decode of the source's last frame, compared exactly (PNG is lossless).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import { CORPUS_DIR as CORPUS } from "./support/corpus.ts";
import { fixturePath, media, saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { publish } from "./support/fixture-files.ts";
import { type FixtureServer, startFixtureServer } from "./support/fixture-server.ts";

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);
const SHORT_VIDEO = "cover-video-1s-audio-5s.mp4";
const ONE_FPS = "cover-testsrc-1fps.mp4";

/** RGB24 of every frame of a file's first video stream, decoded as ffmpeg decodes it. */
async function frames(file: string): Promise<Buffer[]> {
  const { stdout: size } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height"],
    ...["-of", "csv=p=0", file],
  ]);
  const [w, h] = size.trim().split(",").map(Number);
  const { stdout } = await exec(
    bins.ffmpeg,
    ["-v", "error", "-i", file, "-map", "0:v:0", "-fps_mode", "passthrough"].concat([
      ...["-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"],
    ]),
    { encoding: "buffer", maxBuffer: 1 << 28 },
  );
  const bytes = w! * h! * 3;
  return Array.from({ length: stdout.length / bytes }, (_, i) => stdout.subarray(i * bytes, (i + 1) * bytes));
}

let engine: TestEngine;
let corpus: FixtureServer | null = null;
beforeAll(async () => {
  // testsrc2 changes every frame (a counter and a moving square), so the last frame is unlike the others.
  // Made on every run and renamed into place whole: the fixture folder is the machine's, which other runs and
  // clones serve at the same time (fixture-files.ts); the same recipe makes the same bytes.
  await publish(fixturePath(SHORT_VIDEO), (out) =>
    exec(bins.ffmpeg, [
      ...["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=1"],
      ...["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=5"],
      ...["-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", out],
    ]),
  );
  await publish(fixturePath(ONE_FPS), (out) =>
    exec(bins.ffmpeg, [
      ...["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=1:duration=8"],
      ...["-c:v", "libx264", "-bf", "2", "-g", "4", "-pix_fmt", "yuv420p", out],
    ]),
  );
  engine = await startTestEngine();
  if (existsSync(path.join(CORPUS, "small-webm.webm"))) corpus = await startFixtureServer(CORPUS);
  else console.log(`skipped: ${CORPUS}/small-webm.webm is not there`);
});
afterAll(async () => {
  await engine.close();
  await corpus?.close();
});

async function cover(source: string, params: Record<string, unknown>) {
  const res = await engine.job("video.extract-cover", { source_url: source, params });
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  return saveBody(res, "cover.png");
}

/** The first `count` frames of a file's first video stream, each with its presentation time from the start. */
async function timedFrames(file: string, count: number): Promise<{ time: number; rgb: Buffer }[]> {
  const { stdout } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "v:0", "-read_intervals", `%+#${count}`],
    ...["-show_entries", "frame=best_effort_timestamp_time:format=start_time", "-of", "json", file],
  ]);
  const probed = JSON.parse(stdout) as {
    frames: { best_effort_timestamp_time: string }[];
    format: { start_time?: string };
  };
  const start = Number(probed.format.start_time ?? 0);
  const times = probed.frames.map((f) => Number(f.best_effort_timestamp_time) - start);
  const { stdout: size } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height"],
    ...["-of", "csv=p=0", file],
  ]);
  const [w, h] = size.trim().split(",").map(Number);
  const { stdout: raw } = await exec(
    bins.ffmpeg,
    [
      "-v",
      "error",
      "-i",
      file,
      "-map",
      "0:v:0",
      "-fps_mode",
      "passthrough",
      "-frames:v",
      String(count),
    ].concat([...["-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"]]),
    { encoding: "buffer", maxBuffer: 1 << 28 },
  );
  const bytes = w! * h! * 3;
  expect(raw.length).toBe(bytes * count);
  expect(times).toHaveLength(count);
  return times.map((time, i) => ({ time, rgb: raw.subarray(i * bytes, (i + 1) * bytes) }));
}

/** Peak signal-to-noise ratio of two RGB24 pictures of one size, in dB (Infinity when equal). */
function psnr(a: Buffer, b: Buffer): number {
  expect(a.length).toBe(b.length);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i]! - b[i]!) ** 2;
  return sum === 0 ? Number.POSITIVE_INFINITY : 10 * Math.log10((255 * 255 * a.length) / sum);
}

/**
 * Covers of `url` (PNG, lossless) at each of `times` against the source's frames: each must be the frame
 * with the largest time <= `time` (the first before it), equal or at least 45 dB and 3 dB closer than the next.
 */
async function expectShownFrames(url: string, file: string, count: number, times: number[]): Promise<void> {
  const source = await timedFrames(file, count);
  for (const time of times) {
    // Before the first frame, the first is shown.
    const i = Math.max(
      0,
      source.findLastIndex((f) => f.time <= time + 1e-6),
    );
    expect(i, `a frame after ${time}`).toBeLessThan(source.length - 1);
    const [got] = await frames(await cover(url, { time, format: "png" }));
    const shown = psnr(got!, source[i]!.rgb);
    const next = psnr(got!, source[i + 1]!.rgb);
    expect(
      { time, frame: source[i]!.time, shown: shown > 45, closerThanNext: shown > next + 3 },
      `${time}: ${shown.toFixed(1)} dB against the ${source[i]!.time} s frame, ${next.toFixed(1)} dB against the ${source[i + 1]!.time} s frame`,
    ).toEqual({ time, frame: source[i]!.time, shown: true, closerThanNext: true });
  }
}

describe("a cover at `time`: the last frame presented at or before it", () => {
  test("a 1 fps video, B-frames: between frame times and on them", async () => {
    // 0.5 and 3.5 between two frames (3.5 decodes from after the start), 2 and 5 exactly on one, 0 the first.
    await expectShownFrames(media(ONE_FPS), fixturePath(ONE_FPS), 8, [0, 0.5, 2, 3.5, 5, 6.999]);
  });

  test("corpus sample_640x360.mov (29.97 fps, B-frames) and av1-aac.mp4 (25 fps)", async () => {
    if (corpus === null) return;
    // 1 s falls between the 0.967633 and 1.001 s frames; 1.001 is on one.
    await expectShownFrames(
      corpus.url("/media/sample_640x360.mov"),
      path.join(CORPUS, "sample_640x360.mov"),
      45,
      [0.5, 1, 1.001, 1.25],
    );
    // av1-aac.mp4: 1.216 between 1.2 and 1.24 (issue 29 class A's time); 0.8 on a frame.
    await expectShownFrames(
      corpus.url("/media/av1-aac.mp4"),
      path.join(CORPUS, "av1-aac.mp4"),
      40,
      [0.02, 0.8, 1.216, 1.5],
    );
  });

  test("corpus av1-opus.webm at 0, before its first frame (0.014 s after Opus pre-roll): the first", async () => {
    if (corpus === null) return;
    await expectShownFrames(
      corpus.url("/media/av1-opus.webm"),
      path.join(CORPUS, "av1-opus.webm"),
      3,
      [0, 0.01],
    );
  });

  test("corpus cursed-vfr.mp4: inside a frame held 1.115 s, that frame (found by its packets)", async () => {
    if (corpus === null) return;
    // 3026×1386, its first frame at 0 held until 1.115208: none starts in the 0.1 s decoded before 1 s.
    await expectShownFrames(corpus.url("/media/cursed-vfr.mp4"), path.join(CORPUS, "cursed-vfr.mp4"), 2, [1]);
  });
});

describe("a cover at a time no frame starts at or after: the frame on screen then", () => {
  test("a 1 s video beside 5 s of audio, at 3 s: its last frame", async () => {
    const source = await frames(fixturePath(SHORT_VIDEO));
    expect(source).toHaveLength(25);
    const got = await frames(await cover(media(SHORT_VIDEO), { time: 3, format: "png" }));
    expect(got).toHaveLength(1);
    expect(got[0]!.equals(source.at(-1)!)).toBe(true);
    expect(got[0]!.equals(source.at(-2)!)).toBe(false);
  });

  test("corpus small-webm.webm (8×8, one frame), default time and 0.9 s: that frame", async () => {
    if (corpus === null) return;
    const url = corpus.url("/media/small-webm.webm");
    const [only] = await frames(path.join(CORPUS, "small-webm.webm"));
    for (const params of [{ format: "png" }, { format: "png", time: 0.9 }]) {
      const got = await frames(await cover(url, params));
      expect(got).toHaveLength(1);
      expect(got[0]!.equals(only!)).toBe(true);
    }
  });
});
