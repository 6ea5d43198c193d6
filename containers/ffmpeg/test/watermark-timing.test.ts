/**
 * video.watermark presents the source's timing (issue 12), reproduced with generated files: a
 * variable-rate video whose last frame is shown 1.5 s (cursed-vfr.mp4), and a fragmented MP4 whose first
 * AAC packet sits 80 ms before the rest (fragmented.mp4). So does an accurate video.trim whose window ends
 * inside a long frame of the variable-rate video. See source-timing.ts.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import type { EngineResult } from "../src/protocol.ts";
import { thumbDiff, thumbnail, videoPresented } from "./corpus/measure.ts";
import { presentationOf } from "./corpus/mp4-tables.ts";
import { fixturePath, media, saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { ensureFixtures, ffmpeg } from "./support/ffmpeg-fixture.ts";
import { decodedSeconds } from "./support/media-codecs.ts";

// Each case runs a few ffmpeg processes over seconds of small video: generous for a loaded machine.
vi.setConfig({ testTimeout: 300_000 });

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);

const FILES = {
  /** 42 frames without B-frames: 40 at 30 fps, one 0.2 s, the last shown 1.5 s (ends at 3.033 s). */
  vfr: "wm-vfr-long-last.mp4",
  /** Fragmented MP4: video from 0.08 s, AAC whose first packet is at 0 and the rest from 0.1013 s. */
  gap: "wm-frag-aac-gap.mp4",
  /**
   * MPEG-4 Part 2 with B-frames in AVI, 45 pictures at 15 fps (mpeg4-mp3.avi of the media matrix): AVI holds
   * no presentation times, so the decoder's one-frame delay shows the first picture at 1/15 s and gives the
   * last one after the stream has ended, with no time.
   */
  bframeAvi: "wm-bframe.avi",
  /**
   * Fragmented H.264 (no B-frames) and AAC (h264-aac-frag.mp4 of the media matrix): its last AAC sample lasts
   * 640 ticks by its trun, 1,024 as ffmpeg 5.1 reads it.
   */
  frag: "wm-frag.mp4",
} as const;
const VFR_END = 4 / 3 + 0.2 + 1.5;

const H264 = ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p"];

async function generate(): Promise<void> {
  await ensureFixtures({
    [FILES.vfr]: async (out) => {
      const plain = `${out}.plain.mp4`;
      await ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=30:duration=2", "-frames:v", "42"],
        ...["-vf", "setpts='if(lt(N,40),N/30,4/3+(N-40)/5)/TB'", "-fps_mode", "passthrough"],
        ...[...H264, "-bf", "0", plain],
      ]);
      // The last sample's duration, as cursed-vfr.mp4's stts states it.
      await ffmpeg([
        "-i",
        plain,
        "-c",
        "copy",
        "-bsf:v",
        "setts=duration=if(eq(N\\,41)\\,1.5/TB\\,DURATION)",
        out,
      ]);
    },
    [FILES.gap]: async (out) => {
      const video = `${out}.v.mp4`;
      const audio = `${out}.a.m4a`;
      await ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=2", ...H264, video]);
      await ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.2*sin(2*PI*440*t):s=48000:d=2", "-c:a", "aac", audio]);
      // The video 80 ms late and every audio packet but the first 3840 ticks (80 ms) later: the first
      // fragment's first AAC sample then lasts 4864 ticks, as fragmented.mp4's does.
      await ffmpeg([
        ...["-itsoffset", "0.08", "-i", video, "-i", audio, "-map", "0:v", "-map", "1:a", "-c", "copy"],
        ...["-bsf:a", "setts=ts=if(eq(N\\,0)\\,TS\\,TS+3840)"],
        ...["-movflags", "frag_keyframe+empty_moov+default_base_moof", out],
      ]);
    },
    [FILES.frag]: (out) =>
      ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=3"],
        ...["-f", "lavfi", "-i", "aevalsrc=0.2*sin(2*PI*440*t):s=48000:d=3", ...H264, "-bf", "0"],
        ...["-c:a", "aac"],
        ...["-movflags", "frag_keyframe+empty_moov+default_base_moof", out],
      ]),
    [FILES.bframeAvi]: (out) =>
      ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=15:duration=3"],
        ...["-c:v", "mpeg4", "-q:v", "5", "-g", "15", "-bf", "1", out],
      ]),
  });
}

let engine: TestEngine;
beforeAll(async () => {
  await generate();
  engine = await startTestEngine();
}, 120_000);
afterAll(() => engine.close());

async function watermark(source: string) {
  const res = await engine.job("video.watermark", { source_url: media(source), params: { text: "mark" } });
  if (res.status !== 200) throw new Error(`video.watermark answered ${res.status}: ${await res.text()}`);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  return { result, file: await saveBody(res, "out.mp4") };
}

async function probeJson(args: string[]) {
  const { stdout } = await exec(bins.ffprobe, ["-v", "error", "-of", "json", ...args]);
  return JSON.parse(stdout) as {
    format: { duration: string; start_time: string };
    streams: { codec_type: string; codec_name: string; start_time: string; duration: string }[];
    frames?: { best_effort_timestamp_time?: string }[];
  };
}

describe("video.watermark", () => {
  test("holds a variable-rate source's long last frame until the source's video ends", async () => {
    const { result, file } = await watermark(FILES.vfr);
    const probed = await probeJson([
      ...["-show_format", "-show_streams", "-show_frames", "-select_streams", "v:0"],
      ...[
        "-show_entries",
        "frame=best_effort_timestamp_time:stream=codec_type,duration:format=duration",
        file,
      ],
    ]);
    // The video ends where the source's does; its last frame once ended one frame after its start (1.57 s),
    // then it was repeated every 1/30 s until the end (issue 29: frames the source does not have).
    expect(Math.abs(Number(probed.streams[0]!.duration) - VFR_END)).toBeLessThan(0.002);
    expect(Math.abs((result.duration ?? 0) - VFR_END)).toBeLessThan(0.002);
    // Every source frame is kept at its time, and no other.
    const times = (probed.frames ?? []).map((f) => Number(f.best_effort_timestamp_time));
    expect(times).toHaveLength(42);
    expect(times[40]).toBeCloseTo(4 / 3, 3);
    expect(times[41]).toBeCloseTo(4 / 3 + 0.2, 3);
  });

  test("closes a fragmented MP4's gap after its early first AAC packet, still copying", async () => {
    const sourceAudio = await decodedSeconds(fixturePath(FILES.gap));
    const { result, file } = await watermark(FILES.gap);
    const probed = await probeJson(["-show_format", "-show_streams", file]);
    const audio = probed.streams.find((s) => s.codec_type === "audio")!;
    const video = probed.streams.find((s) => s.codec_type === "video")!;
    expect(audio.codec_name).toBe("aac");
    // The audio's samples from 0, one after the other, as they decode; the video where the source shows it
    // (0.08 s: it was moved to 0 with the audio). The header states what plays: the video's end, not the
    // audio's with 80 ms more.
    const source = await probeJson(["-show_streams", fixturePath(FILES.gap)]);
    const sourceVideo = source.streams.find((s) => s.codec_type === "video")!;
    const videoEnds = Number(sourceVideo.start_time) + Number(sourceVideo.duration);
    expect(Number(audio.start_time)).toBeCloseTo(0, 3);
    expect(Number(video.start_time)).toBeCloseTo(0.08, 3);
    const decoded = await decodedSeconds(file);
    expect(Math.abs(decoded - sourceAudio)).toBeLessThan(0.001);
    expect(Number(audio.start_time) + Number(audio.duration)).toBeLessThan(videoEnds - 0.05);
    expect(Math.abs(Number(probed.format.duration) - videoEnds)).toBeLessThan(0.002);
    expect(Math.abs((result.duration ?? 0) - videoEnds)).toBeLessThan(0.002);
  });
});

describe("video.watermark of a fragmented MP4", () => {
  test("its copied AAC ends where the source's trun ends it (not one frame's padding on)", async () => {
    // Both read by the corpus checker's own table reader (mp4-tables.ts): the audio is track 1 in each.
    const audioEnd = async (file: string) => presentationOf(await readFile(file), 1)!.end;
    const source = await audioEnd(fixturePath(FILES.frag));
    expect(source * 48000).toBeCloseTo(1024 + 144000, 3);
    const { file } = await watermark(FILES.frag);
    const probed = await probeJson(["-show_streams", file]);
    expect(probed.streams.find((s) => s.codec_type === "audio")?.codec_name).toBe("aac");
    // Was 384 samples (8 ms) longer.
    expect(Math.abs((await audioEnd(file)) - source)).toBeLessThanOrEqual(1 / 48000);
  });
});

describe("video.watermark of a B-frame AVI", () => {
  test("shows the frames the source times, until its video ends (not the one decoded after it)", async () => {
    const framesOf = async (file: string) =>
      ((await probeJson(["-select_streams", "v:0", "-show_frames", file])).frames ?? []).map(
        (f) => f.best_effort_timestamp_time,
      );
    // The source: 45 pictures decoded, the last one without a time; its video stream ends at 3 s.
    const source = await framesOf(fixturePath(FILES.bframeAvi));
    expect(source).toHaveLength(45);
    // (ffprobe's JSON leaves out a time it does not know.)
    const timed = source.filter((t) => t !== undefined && t !== "N/A").map(Number);
    expect(timed).toHaveLength(44);
    const { result, file } = await watermark(FILES.bframeAvi);
    const times = (await framesOf(file)).map(Number);
    // Before: 45 frames, the last at 3.0 s, shown until 3.067.
    expect(times).toHaveLength(44);
    for (const [i, t] of times.entries()) expect(Math.abs(t - timed[i]!)).toBeLessThan(0.002);
    const video = (await probeJson(["-show_streams", "-select_streams", "v:0", file])).streams[0]!;
    expect(Math.abs(Number(video.start_time) + Number(video.duration) - 3)).toBeLessThan(0.002);
    expect(Math.abs((result.duration ?? 0) - 3)).toBeLessThan(0.002);
  });
});

async function trimAccurate(source: string, start: number, end: number) {
  const res = await engine.job("video.trim", { source_url: media(source), params: { start, end } });
  if (res.status !== 200) throw new Error(`video.trim answered ${res.status}: ${await res.text()}`);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  return { result, file: await saveBody(res, "trim.mp4") };
}

describe("video.trim accurate", () => {
  test.each([
    // Ends inside the last frame, shown 1.5 s from 1.533 s: the window's last second is that frame.
    { start: 0.5, end: 2.5, held: 4 / 3 + 0.2, frames: 27 },
    // Ends inside the 0.2 s frame at 1.333 s.
    { start: 0.5, end: 1.45, held: 4 / 3, frames: 26 },
  ])(
    "a window [$start, $end) that ends inside a long frame shows it until its end",
    async ({ start, end, held, frames }) => {
      const { result, file } = await trimAccurate(FILES.vfr, start, end);
      const video = (await videoPresented(bins, file))!;
      // Before the fix the last frame ended one frame (1/30 s) after its start: 0.97 s short in the first
      // case; then it was repeated every 1/30 s (issue 29). Now the source's frames, the last one lasting.
      expect(video.frames).toBe(frames);
      expect(Math.abs(video.duration - (end - start))).toBeLessThan(0.002);
      expect(Math.abs((result.duration ?? 0) - (end - start))).toBeLessThan(0.002);
      // The last frame is the held one. (A thumbnail is the first frame at or after its time.)
      const source = (await thumbnail(bins, fixturePath(FILES.vfr), held - 0.01))!;
      const shown = await thumbnail(bins, file, held - start - 0.001);
      expect(shown).not.toBeNull();
      // Re-encoded: up to ≈ 1.1 from the source's frame; its neighbours differ from it by 3.4–3.7.
      expect(thumbDiff(shown!, source)).toBeLessThan(2);
    },
  );

  test("a window of evenly spaced frames gets no frame more", async () => {
    const { file } = await trimAccurate(FILES.vfr, 0.2, 1);
    const video = (await videoPresented(bins, file))!;
    expect(video.frames).toBe(24);
    expect(Math.abs(video.duration - 0.8)).toBeLessThan(0.002);
  });
});
