/**
 * video.trim `fast` presents exactly the interval it reports (issue 12), in players that honour the MP4 edit
 * list and in those that ignore it: the video copied from the keyframe at or before `start`, the audio
 * covering the same interval (it used to start at the asked time, frames after the keyframe, and end before a
 * B-frame video did), no frame before `end` hidden behind an edit list (the keyframe used to land a millisecond before 0,
 * where the edit list hid it), a source whose keyframe lies behind its own edit list re-encoded instead, and
 * keyframe flags that players seek by: H.263 in Matroska marked on its intra pictures only (every block was
 * marked one), and a 3GP whose every packet claims a keyframe (no stss) re-encoded. The sources are generated here in the shapes of the corpus files that showed each defect.
 */
import { readFile, writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import type { EngineResult } from "../src/protocol.ts";
import {
  audioPresented,
  decodedFrames,
  probe,
  thumbDiff,
  thumbnail,
  videoPresented,
} from "./corpus/measure.ts";
import { fixturePath, media, saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { ensureFixtures, ffmpeg } from "./support/ffmpeg-fixture.ts";
import { decodedRms, rampAmplitude } from "./support/media-codecs.ts";

const bins = resolveBinaries(process.env);

const SOURCES = {
  /** H.264 with B-frames (keyframe every second, 30 fps) + AAC whose loudness grows with time, 4 s (video.mp4). */
  bframes: "fast-bframes.mp4",
  /** The same cut by a stream copy from 0.5 s: its only keyframe lies behind its edit list (fixture.mov). */
  hiddenKey: "fast-hidden-key.mov",
  /** One video frame and 40 ms of audio (fixture-imovie.mp4). */
  oneFrame: "fast-one-frame.mp4",
  /** Matroska written live (no cues): a seek lands on the first keyframe, not the one asked for (matroska-test5-short.mkv). */
  noCues: "fast-no-cues.mkv",
  /** H.263 with AAC in 3GP, an intra picture every 0.4 s: copied into Matroska (fixture.3gp). */
  h263: "fast-h263.3gp",
  /** The same without its sync-sample table: every packet claims to be a keyframe. */
  h263NoStss: "fast-h263-no-stss.3gp",
  /**
   * MPEG-TS of one keyframe (H.264, 15 fps, 3 s, + AAC; longgop.ts of the media matrix), its B-frames in a
   * fixed pattern (I B B P B B P …, a P-frame every 0.2 s): a seek to the file's start lands after the
   * keyframe, whose dts (1.4 s) is before the file's start time (1.445 s, the AAC's first pts).
   */
  tsOneKey: "fast-one-key.ts",
  /** The same made as longgop.ts of the media matrix is (x264's own B-frame choices, a chirp): refused before. */
  tsLongGop: "fast-longgop.ts",
};

const TONE = [
  "-f",
  "lavfi",
  "-i",
  "aevalsrc=0.2*t*sin(2*PI*440*t)|0.2*t*sin(2*PI*440*t):c=stereo:s=48000:d=4",
];
const H264 = ["-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "30", "-sc_threshold", "0"];
/** H.263 at 352×288 (CIF, one of its few sizes), an intra picture every 12, with AAC in 3GP (fixture.3gp). */
const H263_3GP = [
  ...["-f", "lavfi", "-i", "testsrc2=size=352x288:rate=30:duration=4", ...TONE],
  ...["-c:v", "h263", "-g", "12", "-c:a", "aac", "-ac", "1", "-ar", "8000", "-shortest", "-f", "3gp"],
];

/** Renames the sync-sample table (stss) to a free box: the MP4 demuxer then flags every sample a keyframe. */
async function dropStss(file: string): Promise<void> {
  const bytes = await readFile(file);
  const at = bytes.indexOf("stss", 0, "latin1");
  if (at < 0) throw new Error(`${file} has no stss`);
  bytes.write("free", at, "latin1");
  await writeFile(file, bytes);
}

let engine: TestEngine;
beforeAll(async () => {
  await ensureFixtures({
    [SOURCES.bframes]: (out) =>
      ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30:duration=4", ...TONE],
        ...[...H264, "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k", "-shortest", out],
      ]),
    [SOURCES.oneFrame]: (out) =>
      ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=15", ...TONE],
        ...["-frames:v", "1", "-t", "0.04", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", out],
      ]),
    [SOURCES.noCues]: (out) =>
      ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=24:duration=4", ...TONE],
        ...[...H264, "-g", "24", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"],
        ...["-f", "matroska", "-live", "1", out],
      ]),
    [SOURCES.tsOneKey]: (out) =>
      ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=15:duration=3", ...TONE],
        ...["-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-x264-params", "b-adapt=0:b-pyramid=none"],
        ...["-g", "600", "-sc_threshold", "0"],
        ...["-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", "-f", "mpegts", out],
      ]),
    [SOURCES.tsLongGop]: (out) =>
      ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=15:duration=3", "-f", "lavfi"],
        ...["-i", "aevalsrc=0.4*sin(2*PI*(220*t+400*t*t))|0.3*sin(2*PI*(330*t+300*t*t)):s=48000:d=3"],
        ...["-c:v", "libx264", "-preset", "veryfast", "-g", "15", "-pix_fmt", "yuv420p", "-c:a", "aac"],
        ...["-b:a", "96k", "-g", "600", "-sc_threshold", "0", "-threads", "1", "-f", "mpegts", out],
      ]),
    [SOURCES.h263]: (out) => ffmpeg([...H263_3GP, out]),
    [SOURCES.h263NoStss]: async (out) => {
      await ffmpeg([...H263_3GP, out]);
      await dropStss(out);
    },
  });
  await ensureFixtures({
    [SOURCES.hiddenKey]: (out) =>
      ffmpeg(["-ss", "0.5", "-i", fixturePath(SOURCES.bframes), "-t", "1", "-an", "-c", "copy", out]),
  });
  engine = await startTestEngine();
}, 120_000);
afterAll(() => engine.close());

async function fastTrim(source: string, params: Record<string, unknown>) {
  const res = await engine.job("video.trim", {
    source_url: media(source),
    params: { ...params, mode: "fast" },
  });
  if (res.status !== 200) throw new Error(`video.trim answered ${res.status}: ${await res.text()}`);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  const file = await saveBody(res, `fast.${result.format}`);
  return { result, file };
}

const FRAME = 1 / 30;
/** One AAC frame at 48 kHz, and the encoder's priming a player that ignores the edit list hears. */
const AAC_FRAME = 1024 / 48000;

describe("video.trim fast", () => {
  test("the audio covers the copied video's interval, from the keyframe", { timeout: 120_000 }, async () => {
    const { result, file } = await fastTrim(SOURCES.bframes, { start: 1.5, end: 2.5 });
    expect(result).toMatchObject({ format: "mp4", start: 1, copied: true, width: 320, height: 180 });
    const video = (await videoPresented(bins, file))!;
    const audio = (await audioPresented(bins, file))!;
    // From the keyframe to the asked end at most (no frame shown at or after it is kept: issue 29), short of
    // it by the frames decoded after the reference frame shown past it (2 B-frames here).
    expect(video.duration).toBeLessThanOrEqual(1.5 + 0.001);
    expect(video.duration).toBeGreaterThanOrEqual(1.5 - 3 * FRAME);
    expect(Math.abs(audio - video.duration)).toBeLessThanOrEqual(AAC_FRAME + 0.002);
    expect(Math.abs((result.duration ?? 0) - video.duration)).toBeLessThanOrEqual(FRAME);
    expect(result.end).toBeCloseTo(1 + (result.duration ?? 0), 3);
    // The first audio is the source's at the keyframe (1 s), not at the asked 1.5 s.
    const want = rampAmplitude(1.025) / Math.SQRT2;
    expect(Math.abs((await decodedRms(bins.ffmpeg, file, 0, 0.05)) / want - 1)).toBeLessThan(0.1);
  });

  test("no frame before end hides behind an edit list: the same frames with it and without", async () => {
    const { file } = await fastTrim(SOURCES.bframes, { start: 2.2, end: 3.1 });
    const shown = (await decodedFrames(bins, file))!.map((f) => f.t);
    const raw = (await decodedFrames(bins, file, { ignoreEditlist: true }))!.map((f) => f.t);
    expect(shown[0]).toBeCloseTo(0, 3);
    // The keyframe is at 2 s: the window ends 1.1 s into the file. Past it, and only there, a player that
    // ignores the edit list also shows the reference frames the last B-frames are predicted from (issue 29).
    expect(raw.filter((t) => t < 1.1 - 0.001)).toEqual(shown);
    expect(raw.length - shown.length).toBeLessThanOrEqual(2);
    const rawAudio = (await audioPresented(bins, file, { ignoreEditlist: true }))!;
    expect(rawAudio - (await audioPresented(bins, file))!).toBeLessThanOrEqual(2 * AAC_FRAME + 0.002);
  });

  test("a keyframe behind the source's edit list: re-encoded, exactly the window", async () => {
    const { result, file } = await fastTrim(SOURCES.hiddenKey, { start: 0.2, end: 0.8 });
    expect(result).toMatchObject({ format: "mp4", start: 0.2, copied: false });
    for (const ignoreEditlist of [false, true]) {
      const video = (await videoPresented(bins, file, { ignoreEditlist }))!;
      expect(Math.abs(video.duration - 0.6)).toBeLessThanOrEqual(FRAME + 1e-3);
    }
  });

  test("a seek that lands before the keyframe asked for: re-encoded, not reported from the later one", async () => {
    const { result, file } = await fastTrim(SOURCES.noCues, { start: 1.5, end: 2.5 });
    expect(result).toMatchObject({ format: "mp4", start: 1.5, copied: false });
    const video = (await videoPresented(bins, file))!;
    expect(Math.abs(video.duration - 1)).toBeLessThanOrEqual(1 / 24 + 1e-3);
  });

  test("an MPEG-TS of one keyframe: answered with the window's frames (it was refused, 415)", async () => {
    const source = fixturePath(SOURCES.tsLongGop);
    const { result, file } = await fastTrim(SOURCES.tsLongGop, { start: 0.909, end: 1.818 });
    const origin = Number((await probe(bins, source))!.format?.start_time);
    const frames = (await decodedFrames(bins, source))!.map((f) => f.t - origin);
    // Copied from the keyframe (the first frame), or encoded again from `start` where a copy into Matroska
    // would lose a B-frame shown before `end`: either way every frame shown in [start, end), from 0.
    const from = result.copied === true ? frames[0]! : 0.909;
    expect(result.start).toBeCloseTo(from, 3);
    const shown = frames.filter((t) => t <= from + 1e-6).at(-1)!;
    const want = frames.filter((t) => t >= shown && t < 1.818 - 1e-6).map((t) => Math.max(0, t - from));
    const got = (await decodedFrames(bins, file))!.map((f) => f.t);
    expect(got).toHaveLength(want.length);
    for (const [i, t] of got.entries()) expect(Math.abs(t - want[i]!)).toBeLessThan(0.002);
  });

  test("an MPEG-TS of one keyframe decoded before its start time: copied from that keyframe", async () => {
    const source = fixturePath(SOURCES.tsOneKey);
    // Ends 20 ms after the P-frame shown at 1.821 s: the frames before it in decode order are the window's
    // (a cut of Matroska by decode order that would lose one is encoded again, copied: false).
    const { result, file } = await fastTrim(SOURCES.tsOneKey, { start: 0.9, end: 1.84 });
    // The keyframe is the first frame, on the file's timeline from its start time (the first AAC sample).
    const src = (await probe(bins, source))!;
    const origin = Number(src.format?.start_time);
    const frames = (await decodedFrames(bins, source))!;
    const key = frames[0]!.t - origin;
    expect(result).toMatchObject({ format: "mkv", copied: true });
    expect(result.start).toBeCloseTo(key, 3);
    // Every source frame from the keyframe to end, at its time less the keyframe's.
    const want = frames.filter((f) => f.t - origin < 1.84 - 1e-6).map((f) => f.t - origin - key);
    const got = (await decodedFrames(bins, file))!.map((f) => f.t);
    expect(got).toHaveLength(want.length);
    for (const [i, t] of got.entries()) expect(Math.abs(t - want[i]!)).toBeLessThan(0.002);
  });

  test("H.263 into Matroska: a seek in the output shows the source's picture", async () => {
    const { result, file } = await fastTrim(SOURCES.h263, { start: 1.5, end: 3 });
    expect(result).toMatchObject({ format: "mkv", start: 1.2, copied: true, width: 352, height: 288 });
    // The video starts at 0: the cut audio is FLAC, without the delay an encoder's priming puts before it
    // (AAC: 128 ms at 8 kHz), which Matroska's muxer used to add to every stream's start.
    const { first } = (await videoPresented(bins, file))!;
    expect(first).toBeCloseTo(0, 3);
    const audio = (await probe(bins, file))!.streams!.find((s) => s.codec_type === "audio")!;
    expect(audio).toMatchObject({ codec_name: "flac", sample_rate: "8000" });
    expect(Number(audio.start_time)).toBeCloseTo(0, 3);
    // And it is the source's audio from the keyframe (1.2 s) on, in step with the video: the tone's loudness
    // grows with time, so its level 1 s into the output is the source's at 2.2 s (measured on the source: its
    // mono downmix is not the ramp's stereo level).
    const level = (f: string, from: number) => decodedRms(bins.ffmpeg, f, from, 0.05);
    const want = await level(fixturePath(SOURCES.h263), 2.2);
    expect(Math.abs((await level(file, 1)) / want - 1)).toBeLessThan(0.02);
    // Predicted pictures marked as keyframes (as they were) make a seek decode from one of them: garbage.
    // Times between frames (30 fps), so that both seeks land on the same picture.
    for (const frame of [7, 16, 31]) {
      const at = (frame + 0.5) * FRAME;
      const shown = (await thumbnail(bins, file, at))!;
      const source = (await thumbnail(bins, fixturePath(SOURCES.h263), 1.2 + at))!;
      expect(thumbDiff(shown, source)).toBeLessThan(1);
    }
  });

  test("an H.263 3GP without stss (every packet a keyframe): re-encoded, exactly the window", async () => {
    const { result, file } = await fastTrim(SOURCES.h263NoStss, { start: 1.5, end: 3 });
    expect(result).toMatchObject({ format: "mp4", start: 1.5, copied: false });
    const shown = (await thumbnail(bins, file, 0.55))!;
    const source = (await thumbnail(bins, fixturePath(SOURCES.h263), 2.05))!;
    // H.264 re-encoded from H.263: close, not equal.
    expect(thumbDiff(shown, source)).toBeLessThan(4);
  });

  test("a one-frame video: its frame decodes", async () => {
    const { result, file } = await fastTrim(SOURCES.oneFrame, { start: 0.02, end: 0.04 });
    expect(result).toMatchObject({ start: 0, copied: true });
    const video = (await videoPresented(bins, file))!;
    expect(video.frames).toBe(1);
    expect((await videoPresented(bins, file, { ignoreEditlist: true }))!.frames).toBe(1);
  });
});
