/**
 * A fast trim ends exactly at `end` (issue 29, class B): a B-frame MP4's copy keeps, past `end`, the reference
 * frames that the frames shown before `end` are predicted from, and its edit list ends the presentation at
 * `end`. Before, the packets presented at or after `end` were dropped, and with them the B-frames that
 * reference them: video.mp4 `{1.517, 3.034}` showed 73 frames for 76 and stopped at 2.92 s, its audio too.
 *
 * Expected results are computed from the source by their own route: its decoded frames (times, and each
 * frame's MD5, edit list honoured) over [keyframe, end); the output is decoded with the edit list honoured
 * and compared frame by frame, and its presented end read as ffprobe states it.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import type { EngineResult } from "../src/protocol.ts";
import { audioPresented } from "./corpus/measure.ts";
import { CORPUS_DIR } from "./support/corpus.ts";
import { fixturePath, media, saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { ensureFixtures, ffmpeg } from "./support/ffmpeg-fixture.ts";
import { type FixtureServer, startFixtureServer } from "./support/fixture-server.ts";
import { decodedFrames } from "./support/frames.ts";

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);

/** H.264 with 2 B-frames, 30 fps, a keyframe every second, + AAC, 4 s. */
const BFRAMES = "fast-end-bframes.mp4";
/** The same with AC-3 (its encoder's delay, 256 samples, hidden by the edit list; 1,536-sample frames). */
const AC3 = "fast-end-ac3.mp4";

let engine: TestEngine;
let corpus: FixtureServer | undefined;
beforeAll(async () => {
  await ensureFixtures({
    [BFRAMES]: (out) =>
      ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30:duration=4"],
        ...["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=4"],
        ...["-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "30", "-sc_threshold", "0"],
        ...["-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", out],
      ]),
    [AC3]: (out) =>
      ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30:duration=4"],
        ...["-f", "lavfi", "-i", "anoisesrc=c=pink:seed=29:a=0.3:r=48000:d=4"],
        ...["-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "30", "-sc_threshold", "0"],
        ...["-pix_fmt", "yuv420p", "-c:a", "ac3", "-b:a", "192k", "-shortest", out],
      ]),
  });
  engine = await startTestEngine();
  if (existsSync(path.join(CORPUS_DIR, "video.mp4"))) corpus = await startFixtureServer(CORPUS_DIR);
  else console.log(`skipped: ${CORPUS_DIR}/video.mp4 is not there`);
}, 120_000);
afterAll(async () => {
  await engine.close();
  await corpus?.close();
});

async function fastTrim(url: string, params: Record<string, unknown>) {
  const res = await engine.job("video.trim", { source_url: url, params: { ...params, mode: "fast" } });
  if (res.status !== 200) throw new Error(`video.trim answered ${res.status}: ${await res.text()}`);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  return { result, file: await saveBody(res, `fast-end.${result.format}`) };
}

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

async function statedDurations(file: string): Promise<{ format: number; video: number }> {
  const { stdout } = await exec(bins.ffprobe, [
    ...["-v", "error", "-show_entries", "format=duration:stream=codec_type,duration", "-of", "json", file],
  ]);
  const p = JSON.parse(stdout) as {
    format: { duration: string };
    streams: { codec_type: string; duration: string }[];
  };
  return {
    format: Number(p.format.duration),
    video: Number(p.streams.find((s) => s.codec_type === "video")!.duration),
  };
}

/**
 * The output presents the source's frames over [keyframe, end) exactly: the same pictures at the same times
 * less the keyframe's, none missing, and the presentation (edit list, reported duration, audio) ends at end.
 */
async function expectExactEnd(source: string, url: string, start: number, end: number) {
  const { result, file } = await fastTrim(url, { start, end });
  const key = await keyframeAtOrBefore(source, start);
  const want = (await decodedFrames(source)).filter((f) => f.t >= key - 1e-6 && f.t < end - 1e-6);
  const got = await decodedFrames(file);
  expect(result).toMatchObject({ format: "mp4", copied: true });
  expect(result.start).toBeCloseTo(key, 3);
  expect(got.map((f) => f.md5)).toEqual(want.map((f) => f.md5));
  for (const [i, f] of got.entries()) expect(Math.abs(f.t - (want[i]!.t - key))).toBeLessThan(0.001);
  // The last frame is held until end − keyframe, where the edit list ends the presentation.
  const stated = await statedDurations(file);
  expect(Math.abs(stated.video - (end - key))).toBeLessThan(0.001);
  expect(Math.abs(stated.format - (end - key))).toBeLessThan(0.001);
  expect(Math.abs((result.duration ?? 0) - (end - key))).toBeLessThan(0.001);
  // The audio runs to end as well (AAC: the last frame decoded whole at most).
  const audio = (await audioPresented(bins, file))!;
  expect(audio).toBeGreaterThan(end - key - 0.003);
  expect(audio).toBeLessThan(end - key + 1024 / 48000 + 0.003);
  return { want, got };
}

describe("video.trim fast ends at end", () => {
  test("B-frame H.264: every frame before end, the last held until end", { timeout: 120_000 }, async () => {
    // 2.45 lies between the frames at 2.433 and 2.467; the P-frame shown at 2.5 is what the B-frames at
    // 2.433 and 2.467 are predicted from.
    const { got } = await expectExactEnd(fixturePath(BFRAMES), media(BFRAMES), 1.5, 2.45);
    expect(got).toHaveLength(44);
  });

  test("AC-3: the audio ends at end too, to the sample (it ran 17 ms on)", { timeout: 120_000 }, async () => {
    const { result, file } = await fastTrim(media(AC3), { start: 1.5, end: 2.45 });
    const key = await keyframeAtOrBefore(fixturePath(AC3), 1.5);
    expect(result).toMatchObject({ format: "mp4", copied: true });
    const { stdout } = await exec(bins.ffprobe, [
      ...["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=codec_name,duration"],
      ...["-of", "csv=p=0", file],
    ]);
    const [codec, stated] = stdout.trim().split(",");
    expect(codec).toBe("ac3");
    // Decoded with the edit list honoured, and as the track's tables state it: (end − keyframe) × 48,000.
    const samples = Math.round((await audioPresented(bins, file))! * 48000);
    expect(samples).toBe(Math.round((2.45 - key) * 48000));
    expect(Math.abs(Number(stated) - (2.45 - key))).toBeLessThan(0.001);
  });

  test.skipIf(!existsSync(path.join(CORPUS_DIR, "video.mp4")))(
    "video.mp4 {1.517, 3.034} of the corpus: all 76 frames, held until 3.034",
    { timeout: 120_000 },
    async () => {
      const { got } = await expectExactEnd(
        path.join(CORPUS_DIR, "video.mp4"),
        corpus!.url("/media/video.mp4"),
        1.517,
        3.034,
      );
      expect(got).toHaveLength(76);
    },
  );
});
