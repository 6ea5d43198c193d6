/**
 * Audio durations and codecs as promised (issue 29, classes C–E; F: probe-duration.test.ts), each measured on the produced file by decoding
 * it (samples counted at the file's own rate) and by ffprobe, never by the engine's own arithmetic:
 * C. AAC in M4A decodes to exactly the samples it was given, at any rate (the encoder's last frame padded
 *    to 1024 samples played whole was up to 128 ms more at 8 kHz: toothsome-vbr.mp3, issue-92.wav);
 * D. audio.trim keeps ADPCM and DTS in their codec (issue-92.wav, toothsome-dts.mp4; AMR, which no encoder
 *    here writes: amr-exact.test.ts);
 * E. an encode reports what it holds when the source's timestamps do not describe its samples
 *    (alac-in-matroska.mka: 1-tick timestamps; fragmented.mp4: an early first AAC packet);
 * The sources are generated in the shapes of those corpus files.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import type { EngineResult } from "../src/protocol.ts";
import { ffprobe, fixturePath, media, saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { ensureFixtures, ffmpeg } from "./support/ffmpeg-fixture.ts";

vi.setConfig({ testTimeout: 240_000 });

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);

const FILES = {
  /** 3.3 s of PCM at 22.05 kHz (issue-92.wav's rate): 72,765 samples, 61 past a whole number of frames. */
  wav22k: "dur-22k.wav",
  /** 3.3 s of MP3 at 8 kHz: 26,400 samples (800 past 25 frames). */
  mp38k: "dur-8k.mp3",
  /** 4 s of AAC at 16 kHz in M4A. */
  aac16k: "dur-16k.m4a",
  /** 4 s of Microsoft ADPCM at 22.05 kHz in WAV (issue-92.wav). */
  adpcm: "dur-adpcm.wav",
  /** 3 s of DTS in MP4 (toothsome-dts.mp4). */
  dts: "dur-dts.mp4",
  /** 3 s of ALAC at 41 kHz in Matroska, every packet stamped 1 ms after the one before (alac-in-matroska.mka). */
  alacTicks: "dur-alac-ticks.mka",
  /** 2 s of AAC whose first packet sits 80 ms before the rest (fragmented.mp4): the header says 2.08 s. */
  aacGap: "dur-aac-gap.m4a",
} as const;

const tone = (rate: number, seconds: number) => [
  ...["-f", "lavfi", "-i", `aevalsrc=0.2*sin(2*PI*440*t):s=${rate}:d=${seconds}`],
];

async function generate(): Promise<void> {
  await ensureFixtures({
    [FILES.wav22k]: (out) => ffmpeg([...tone(22050, 3.3), "-c:a", "pcm_s16le", out]),
    [FILES.mp38k]: (out) => ffmpeg([...tone(8000, 3.3), "-c:a", "libmp3lame", out]),
    [FILES.aac16k]: (out) => ffmpeg([...tone(16000, 4), "-c:a", "aac", "-f", "mp4", out]),
    [FILES.adpcm]: (out) => ffmpeg([...tone(22050, 4), "-c:a", "adpcm_ms", out]),
    [FILES.dts]: (out) => ffmpeg([...tone(48000, 3), "-c:a", "dca", "-strict", "-2", "-f", "mp4", out]),
    [FILES.alacTicks]: (out) =>
      ffmpeg([...tone(41000, 3), "-c:a", "alac", "-bsf:a", "setts=ts=N:duration=1", "-f", "matroska", out]),
    [FILES.aacGap]: async (out) => {
      const plain = `${out}.plain.m4a`;
      await ffmpeg([...tone(48000, 2), "-c:a", "aac", plain]);
      // 3840 ticks of 1/48000 s: every packet but the first 80 ms later.
      await ffmpeg(["-i", plain, "-c:a", "copy", "-bsf:a", "setts=ts=if(eq(N\\,0)\\,TS\\,TS+3840)", out]);
    },
  });
}

/** The first audio stream's rate and its samples as decoded (edit lists, pre-skip, end trimming applied). */
async function decodedSamples(file: string): Promise<{ rate: number; samples: number; seconds: number }> {
  const probed = await ffprobe(file);
  const rate = Number(probed.streams.find((s) => s.codec_type === "audio")?.sample_rate);
  const { stdout } = await exec(
    bins.ffmpeg,
    ["-v", "error", "-i", file, "-map", "0:a:0", "-ac", "1", "-c:a", "pcm_s16le", "-f", "s16le", "pipe:1"],
    { encoding: "buffer", maxBuffer: 256 * 1024 * 1024 },
  );
  const samples = stdout.length / 2;
  return { rate, samples, seconds: samples / rate };
}

/**
 * Seconds of audio a player presents: the decoded samples from the first frame's time, ended where an
 * MP4's last frame's stated duration ends them when that is earlier (the declared padding of the AAC's last
 * frame, which ffmpeg 5.1 decodes whole).
 */
async function presentedSeconds(file: string): Promise<number> {
  const { stdout } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "a:0", "-show_entries"],
    ...[
      "frame=best_effort_timestamp_time,pkt_duration_time,nb_samples:stream=sample_rate",
      "-of",
      "json",
      file,
    ],
  ]);
  const j = JSON.parse(stdout) as {
    streams: { sample_rate: string }[];
    frames: { best_effort_timestamp_time: string; pkt_duration_time?: string; nb_samples: number }[];
  };
  const rate = Number(j.streams[0]!.sample_rate);
  const first = Number(j.frames[0]!.best_effort_timestamp_time);
  const samples = j.frames.reduce((n, f) => n + f.nb_samples, 0);
  const last = j.frames.at(-1)!;
  const declared = Number(last.best_effort_timestamp_time) + Number(last.pkt_duration_time ?? Number.NaN);
  const mp4 = file.endsWith(".m4a") || file.endsWith(".mp4");
  return mp4 && Number.isFinite(declared) ? Math.min(samples / rate, declared - first) : samples / rate;
}

/** ffprobe's answer for a file: its container duration and first audio codec. */
async function probed(file: string): Promise<{ duration: number; codec: string | undefined }> {
  const p = await ffprobe(file);
  return {
    duration: Number(p.format.duration),
    codec: p.streams.find((s) => s.codec_type === "audio")?.codec_name,
  };
}

let engine: TestEngine;
beforeAll(async () => {
  await generate();
  engine = await startTestEngine();
}, 180_000);
afterAll(() => engine.close());

async function produce(type: string, sourceUrl: string, params: Record<string, unknown>) {
  const res = await engine.job(type, { source_url: sourceUrl, params });
  if (res.status !== 200) throw new Error(`${type} answered ${res.status}: ${await res.text()}`);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  const file = await saveBody(res, `out.${result.format}`);
  return { result, file };
}

describe("C: AAC in M4A decodes to exactly the samples it was given", () => {
  test.each([
    [FILES.wav22k, 22050],
    [FILES.mp38k, 8000],
  ])("extract-audio m4a of %s", async (source, rate) => {
    const want = await decodedSamples(fixturePath(source));
    const { result, file } = await produce("video.extract-audio", media(source), { format: "m4a" });
    const got = await decodedSamples(file);
    expect(got.rate).toBe(rate);
    expect(got.samples).toBe(want.samples);
    expect(Math.abs((result.duration ?? 0) - got.seconds)).toBeLessThanOrEqual(0.001);
    expect(Math.abs((await probed(file)).duration - got.seconds)).toBeLessThanOrEqual(0.001);
  });

  test("audio.trim of 16 kHz AAC: the window's samples, no padding after them", async () => {
    const { result, file } = await produce("audio.trim", media(FILES.aac16k), { start: 0.7, end: 2.25 });
    const got = await decodedSamples(file);
    expect(result).toMatchObject({ format: "m4a", copied: false });
    expect(Math.abs(got.samples - 1.55 * 16000)).toBeLessThanOrEqual(2);
    expect(Math.abs((result.duration ?? 0) - got.seconds)).toBeLessThanOrEqual(0.001);
    // The encoder's priming and the alignment's silence are hidden by the edit list, at most 2 frames.
    const { stdout } = await exec(
      bins.ffmpeg,
      ["-v", "error", "-ignore_editlist", "1", "-i", file, "-ac", "1", "-f", "s16le", "pipe:1"],
      { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
    );
    expect(stdout.length / 2 - got.samples).toBeLessThan(2 * 1024);
  });
});

describe("D: audio.trim keeps the source's codec", () => {
  test.each([
    // [source, format, codec, the codec's frame or block in seconds: the most a decoder plays past end]
    [FILES.adpcm, "wav", "adpcm_ms", 0.015],
    // In M4A, whose edit list hides the DTS encoder's 512-sample delay: exactly the window.
    [FILES.dts, "m4a", "dts", 0],
  ])("%s → %s (%s)", async (source, format, codec, frame) => {
    const { result, file } = await produce("audio.trim", media(source), { start: 1, end: 2.5 });
    expect(result).toMatchObject({ format, start: 1 });
    const got = await decodedSamples(file);
    const p = await probed(file);
    expect(p.codec).toBe(codec);
    expect(got.seconds - 1.5).toBeGreaterThanOrEqual(-0.001);
    expect(got.seconds - 1.5).toBeLessThanOrEqual(frame + 0.001);
    expect(Math.abs((result.duration ?? 0) - got.seconds)).toBeLessThanOrEqual(0.001);
    expect(Math.abs(p.duration - got.seconds)).toBeLessThanOrEqual(0.001);
  });
  // AMR (fixture.3gp): amr-exact.test.ts.
});

describe("E: an encode reports the audio it holds, whatever the source's timestamps", () => {
  test.each([
    [FILES.alacTicks, "m4a"],
    [FILES.alacTicks, "opus"],
    [FILES.aacGap, "m4a"],
    [FILES.aacGap, "opus"],
  ])("extract-audio of %s → %s", async (source, format) => {
    const want = { seconds: await presentedSeconds(fixturePath(source)) };
    const { result, file } = await produce("video.extract-audio", media(source), { format });
    const got = await decodedSamples(file);
    expect(Math.abs(got.seconds - want.seconds)).toBeLessThanOrEqual(0.001);
    expect(Math.abs((result.duration ?? 0) - got.seconds)).toBeLessThanOrEqual(0.001);
    if (format === "m4a") {
      expect(Math.abs((await probed(file)).duration - got.seconds)).toBeLessThanOrEqual(0.001);
    }
  });
});
