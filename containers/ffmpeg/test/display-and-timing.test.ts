/**
 * What a player presents, reproduced with generated files (issue 12): non-square pixels, variable frame
 * rate, audio copies whose timestamps or samples do not match their header, and sources that hold nothing
 * to decode. Each case stands for real files of ../shared/corpus (named per test).
 */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import type { EngineResult } from "../src/protocol.ts";
import { errorOf, ffprobe, media, saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { ensureFixtures, ffmpeg } from "./support/ffmpeg-fixture.ts";
import { decodedSeconds } from "./support/media-codecs.ts";

// Each case runs two or three ffmpeg processes over a few seconds of video: generous for a loaded machine.
vi.setConfig({ testTimeout: 300_000 });

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);

const FILES = {
  /** 160×90 H.264 whose pixels are twice as wide as high (sar_2x1.mp4, fixture.3gp): shown 320×90. */
  sar: "display-sar-2x1.mp4",
  /** 60 frames: 30 in the first second, then 10 per second (cursed-vfr.mp4), and 4 s of AAC. */
  vfr: "display-vfr-av.mp4",
  /** 2 s of AAC whose first packet sits 80 ms before the rest (fragmented.mp4): the header says 2.08 s. */
  gap: "display-aac-gap.m4a",
  /** AAC in MP4 whose samples are all garbage: copies without an error, decodes to nothing (issue-74.m4a). */
  garbled: "display-aac-garbled.m4a",
  /** A WAV with a header and no samples (small-wav.wav). */
  emptyWav: "display-empty.wav",
  /** An AVI with no frame: its video stream states a duration of 0 (small-avi.avi). */
  emptyAvi: "display-empty.avi",
} as const;

const H264 = ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p"];

/** Overwrites every byte of the first mdat's payload with `byte`. */
async function garble(file: string, byte: number): Promise<void> {
  const bytes = await readFile(file);
  for (let o = 0; o + 8 <= bytes.length; ) {
    const size = bytes.readUInt32BE(o);
    if (bytes.toString("latin1", o + 4, o + 8) === "mdat") {
      bytes.fill(byte, o + 8, o + size);
      break;
    }
    if (size < 8) break;
    o += size;
  }
  await writeFile(file, bytes);
}

async function generate(): Promise<void> {
  const tone = ["-f", "lavfi", "-i", "aevalsrc=0.2*sin(2*PI*440*t):s=48000:d=2"];
  await ensureFixtures({
    [FILES.sar]: (out) =>
      ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=2", "-vf", "setsar=2"],
        ...H264,
        out,
      ]),
    [FILES.vfr]: (out) =>
      ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=30:duration=2"],
        ...["-f", "lavfi", "-i", "aevalsrc=0.2*sin(2*PI*440*t):s=48000:d=4"],
        ...["-vf", "setpts='if(lt(N,30),N/30,1+(N-30)/10)/TB'", "-fps_mode", "passthrough"],
        ...[...H264, "-c:a", "aac"],
        out,
      ]),
    [FILES.gap]: async (out) => {
      const plain = `${out}.plain.m4a`;
      await ffmpeg([...tone, "-c:a", "aac", plain]);
      // 3840 ticks of 1/48000 s: every packet but the first 80 ms later.
      await ffmpeg(["-i", plain, "-c:a", "copy", "-bsf:a", "setts=ts=if(eq(N\\,0)\\,TS\\,TS+3840)", out]);
    },
    [FILES.garbled]: async (out) => {
      await ffmpeg([...tone, "-c:a", "aac", out]);
      await garble(out, 0x55);
    },
    [FILES.emptyWav]: (out) => ffmpeg([...tone, "-t", "0", "-c:a", "pcm_s16le", "-f", "wav", out]),
    [FILES.emptyAvi]: (out) =>
      ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25", "-frames:v", "0", out]),
  });
}

let engine: TestEngine;
beforeAll(async () => {
  await generate();
  engine = await startTestEngine();
}, 120_000);
afterAll(() => engine.close());

async function produce(type: string, source: string, params: Record<string, unknown> = {}) {
  const res = await engine.job(type, { source_url: media(source), params });
  if (res.status !== 200) throw new Error(`${type} answered ${res.status}: ${await res.text()}`);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  const file = await saveBody(res, `out.${result.format}`);
  return { result, file };
}

/** ffprobe's first video stream, with its sample aspect ratio. */
async function videoStream(file: string) {
  const probed = await ffprobe(file);
  const v = probed.streams.find((s) => s.codec_type === "video") as
    | { width: number; height: number; sample_aspect_ratio?: string }
    | undefined;
  return v!;
}

const square = (sar: string | undefined) => sar === undefined || sar === "1:1" || sar === "0:1";

describe("pixel aspect ratio: everything reports the size a player shows", () => {
  test("probe reports the display size", async () => {
    const res = await engine.job("video.probe", { source_url: media(FILES.sar) });
    expect(await res.json()).toMatchObject({ width: 320, height: 90 });
  });

  test.each([
    ["video.trim", { start: 0.5, end: 1.5 }],
    ["video.watermark", { text: "mark" }],
  ])("%s re-encodes in square pixels at the display size", async (type, params) => {
    const { result, file } = await produce(type, FILES.sar, params);
    expect(result).toMatchObject({ width: 320, height: 90 });
    const v = await videoStream(file);
    expect({ width: v.width, height: v.height, square: square(v.sample_aspect_ratio) }).toEqual({
      width: 320,
      height: 90,
      square: true,
    });
  });

  test("a fast trim keeps the coded pixels and reports the size they are shown at", async () => {
    const { result, file } = await produce("video.trim", FILES.sar, { start: 0, end: 1, mode: "fast" });
    const v = await videoStream(file);
    expect(v).toMatchObject({ width: 160, height: 90, sample_aspect_ratio: "2:1" });
    expect(result).toMatchObject({ width: 320, height: 90 });
  });

  test("a cover is an image of the display size", async () => {
    const { result, file } = await produce("video.extract-cover", FILES.sar, { time: 1 });
    expect(result).toMatchObject({ width: 320, height: 90 });
    const v = await videoStream(file);
    expect([v.width, v.height, square(v.sample_aspect_ratio)]).toEqual([320, 90, true]);
  });
});

describe("variable frame rate", () => {
  test.each([
    ["video.watermark", { text: "mark" }],
    ["video.trim", { start: 0, end: 10 }],
  ])("%s keeps every frame at its source time", async (type, params) => {
    const { file } = await produce(type, FILES.vfr, params);
    const { stdout } = await exec(bins.ffprobe, [
      ...["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=best_effort_timestamp_time"],
      ...["-of", "csv=p=0", file],
    ]);
    const times = stdout
      .split("\n")
      .map((line) => Number.parseFloat(line))
      .filter(Number.isFinite);
    expect(times).toHaveLength(60);
    // Frame 30 is the first of the slow part: at 1 s, the next 0.1 s later (not 1/30 s).
    expect(times[30]).toBeCloseTo(1, 2);
    expect(times[31]! - times[30]!).toBeCloseTo(0.1, 2);
    // The audio is untouched by the video's timing (the options are the video stream's only).
    expect(await decodedSeconds(file)).toBeGreaterThan(3.8);
  });
});

describe("audio copies report the audio they decode to", () => {
  test("a gap in the timestamps is not counted", async () => {
    const { result, file } = await produce("video.extract-audio", FILES.gap, { format: "original" });
    const decoded = await decodedSeconds(file);
    expect(Math.abs(decoded - 2)).toBeLessThan(0.03);
    expect(Math.abs((result.duration ?? 0) - decoded)).toBeLessThan(0.022);
  });

  test.each([
    ["original", FILES.garbled],
    ["original", FILES.emptyWav],
    ["mp3", FILES.emptyWav],
  ])("format %s of audio that decodes to nothing is refused", async (format, source) => {
    const res = await engine.job("video.extract-audio", { source_url: media(source), params: { format } });
    expect(await errorOf(res)).toMatchObject({ status: 415 });
  });
});

test("a trim of a video whose stream states a duration of 0 is a 415, not a 400 about start", async () => {
  const res = await engine.job("video.trim", {
    source_url: media(FILES.emptyAvi),
    params: { start: 0, end: 1 },
  });
  expect(await errorOf(res)).toMatchObject({ status: 415 });
});
