/**
 * Audio samples from `start` to `end` exactly, and `original` copies that present the source's samples
 * (issue 29, the audio rows of the independent corpus check). Each case is measured on the produced file by
 * decoding it with ffmpeg and comparing its samples with the source's, decoded the same way (lossless
 * outputs sample for sample, lossy ones by cross-correlation): never by the engine's own arithmetic.
 * Sources are generated in the shapes of the corpus files that showed each class:
 * - timestamps that do not follow the samples (alac.m4a, alac-in-matroska.mka: ALAC packets 1 tick apart);
 * - a timeline that starts below 0 (vp9-opus.webm, ac3.mkv: the first packet before 0);
 * - a seek timed by a rounded byte rate (issue-92.wav: ADPCM, 4 ms early at 63 s);
 * - declared padding (edts.mp4: AAC whose edit list ends inside its last frame);
 * - copies whose muxer changes what decoders present (mp3-cover-22s.mp3: an MP3 without an encoder-delay
 *   tag; av1-opus.webm: Opus whose WebM trims its last packet).
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import type { EngineResult } from "../src/protocol.ts";
import { mpegAudioLayer } from "./corpus/measure.ts";
import { presentationOf } from "./corpus/mp4-tables.ts";
import { ffprobe, fixturePath, media, saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { ensureFixtures, ffmpeg } from "./support/ffmpeg-fixture.ts";
import { lagOf } from "./support/lag.ts";

vi.setConfig({ testTimeout: 240_000 });

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);

const FILES = {
  /**
   * 3 s of ALAC at 41 kHz in M4A stamped like alac.m4a: every 8th packet at its time, the 7 after it 1 tick
   * apart (the header states 2.4 s).
   */
  alacTicks: "exact-alac-groups.m4a",
  /** 3 s of 16-bit PCM at 48 kHz in Matroska, its first sample at −5 ms. */
  pcmEarly: "exact-pcm-early.mka",
  /** 70 s of Microsoft ADPCM at 22.05 kHz in WAV (issue-92.wav). */
  adpcmLong: "exact-adpcm-long.wav",
  /** 1 s of AAC at 44.1 kHz in MP4: 44,100 samples, the last frame's padding declared by the edit list. */
  aacPadded: "exact-aac-padded.mp4",
  /** 2 s of MP3 without a Xing/LAME tag (a decoder drops nothing at its start). */
  mp3Bare: "exact-mp3-bare.mp3",
  /** 0.5 s of stereo Microsoft ADPCM at 44.1 kHz in WAV (fixture.avi's audio). */
  adpcmShort: "exact-adpcm-short.wav",
  /** 3 s of 5.1 AC-3 at 48 kHz in Matroska (ac3.mkv). */
  ac3: "exact-ac3.mka",
  /** 1.01 s of Opus in WebM: its last packet trimmed by the container (DiscardPadding). */
  opusWebm: "exact-opus.webm",
  /** 3 s of stereo MP2 at 48 kHz in Matroska and in MPEG-TS (mpeg2-mp2.mkv and .ts of the media matrix). */
  mp2Mkv: "exact-mp2.mka",
  mp2Ts: "exact-mp2.ts",
  /** 3 s of stereo ALAC at 48 kHz in CAF: 35 packets of 4,096 samples and one of 640, none timed. */
  alacCaf: "exact-alac.caf",
  /**
   * 3 s of AAC at 48 kHz in a fragmented MP4 (h264-aac-frag.mp4 of the media matrix): no edit list, its last
   * trun sample lasting 640 ticks (1,024 of priming + 144,000 = 145,024), which ffmpeg 5.1 reads as 1,024.
   */
  aacFrag: "exact-aac-frag.mp4",
} as const;

/** Pink noise: no period, so a position found by cross-correlation is the only one. */
const noise = (rate: number, seconds: number, channels = 1) => [
  ...["-f", "lavfi", "-i", `anoisesrc=c=pink:seed=29:a=0.3:r=${rate}:d=${seconds}`],
  ...(channels === 1 ? [] : ["-ac", String(channels)]),
];

async function generate(): Promise<void> {
  await ensureFixtures({
    [FILES.alacTicks]: (out) =>
      ffmpeg([
        ...noise(41000, 3),
        "-c:a",
        "alac",
        "-bsf:a",
        "setts=ts=(N-mod(N\\,8))*4096+mod(N\\,8):duration=1",
        "-f",
        "mp4",
        out,
      ]),
    [FILES.pcmEarly]: (out) =>
      ffmpeg([
        ...noise(48000, 3),
        ...["-c:a", "pcm_s16le", "-output_ts_offset", "-0.005", "-avoid_negative_ts", "disabled"],
        ...["-f", "matroska", out],
      ]),
    [FILES.adpcmLong]: (out) => ffmpeg([...noise(22050, 70), "-c:a", "adpcm_ms", out]),
    [FILES.aacPadded]: (out) => ffmpeg([...noise(44100, 1, 2), "-c:a", "aac", "-f", "mp4", out]),
    [FILES.mp3Bare]: (out) =>
      ffmpeg([...noise(44100, 2), "-c:a", "libmp3lame", "-write_xing", "0", "-f", "mp3", out]),
    [FILES.adpcmShort]: (out) => ffmpeg([...noise(44100, 0.5, 2), "-c:a", "adpcm_ms", out]),
    [FILES.ac3]: (out) => ffmpeg([...noise(48000, 3, 6), "-c:a", "ac3", "-f", "matroska", out]),
    [FILES.opusWebm]: (out) => ffmpeg([...noise(48000, 1.01), "-c:a", "libopus", "-f", "webm", out]),
    [FILES.mp2Mkv]: (out) => ffmpeg([...noise(48000, 3, 2), "-c:a", "mp2", "-f", "matroska", out]),
    [FILES.mp2Ts]: (out) => ffmpeg([...noise(48000, 3, 2), "-c:a", "mp2", "-f", "mpegts", out]),
    [FILES.alacCaf]: (out) => ffmpeg([...noise(48000, 3, 2), "-c:a", "alac", "-f", "caf", out]),
    [FILES.aacFrag]: (out) =>
      ffmpeg([
        ...noise(48000, 3, 2),
        "-c:a",
        "aac",
        "-movflags",
        "frag_keyframe+empty_moov",
        "-f",
        "mp4",
        out,
      ]),
  });
}

/** The first audio stream decoded to mono 16-bit samples at `rate` (edit lists, skips and trims applied). */
async function decode(file: string, rate: number): Promise<Int16Array> {
  const { stdout } = await exec(
    bins.ffmpeg,
    [
      ...["-v", "error", "-i", file, "-map", "0:a:0", "-ac", "1", "-ar", String(rate)],
      ...["-c:a", "pcm_s16le", "-f", "s16le", "pipe:1"],
    ],
    { encoding: "buffer", maxBuffer: 256 * 1024 * 1024 },
  );
  return new Int16Array(stdout.buffer, stdout.byteOffset, stdout.length / 2);
}

/** The time of the first decoded sample (ffprobe's first frame), seconds. */
async function firstSampleTime(file: string): Promise<number> {
  const { stdout } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "a:0", "-read_intervals", "%+#1"],
    ...["-show_entries", "frame=best_effort_timestamp_time", "-of", "csv=p=0", file],
  ]);
  return Number(stdout.trim().split("\n")[0]);
}

let engine: TestEngine;
beforeAll(async () => {
  await generate();
  engine = await startTestEngine();
}, 180_000);
afterAll(() => engine.close());

async function produce(type: string, source: string, params: Record<string, unknown>) {
  const res = await engine.job(type, { source_url: media(source), params });
  if (res.status !== 200) throw new Error(`${type} answered ${res.status}: ${await res.text()}`);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  const file = await saveBody(res, `out.${result.format}`);
  return { result, file };
}

const probedDuration = async (file: string) => Number((await ffprobe(file)).format.duration);

describe("audio.trim: the window's samples, found by their positions, not by timestamps that lie", () => {
  test("ALAC packets 1 tick apart: [1, 2) is the source's samples 41,000–82,000, exactly", async () => {
    const src = await decode(fixturePath(FILES.alacTicks), 41000);
    const { result, file } = await produce("audio.trim", FILES.alacTicks, { start: 1, end: 2 });
    const out = await decode(file, 41000);
    expect(result).toMatchObject({ format: "m4a", start: 1 });
    expect(out.length).toBe(41000);
    expect(Buffer.from(out.buffer, out.byteOffset, out.byteLength)).toEqual(
      Buffer.from(src.buffer, src.byteOffset + 41000 * 2, 41000 * 2),
    );
    expect(Math.abs((result.duration ?? 0) - 1)).toBeLessThanOrEqual(0.001);
  });

  test("a timeline that starts at −5 ms: [1, 1.5) begins with the sample presented at 1.000 s", async () => {
    const first = await firstSampleTime(fixturePath(FILES.pcmEarly));
    expect(first).toBeCloseTo(-0.005, 4);
    const src = await decode(fixturePath(FILES.pcmEarly), 48000);
    const { result, file } = await produce("audio.trim", FILES.pcmEarly, { start: 1, end: 1.5 });
    const out = await decode(file, 48000);
    expect(result).toMatchObject({ format: "wav", start: 1 });
    expect(out.length).toBe(24000);
    // The sample presented at 1.000 s is the source's number (1 − first) × 48,000. Matroska times its
    // packets to the millisecond: the decode that starts at a seek point is placed within half of one.
    const from = Math.round((1 - first) * 48000);
    for (const rel of [0, 12000]) {
      const m = lagOf(src, from + rel, out.subarray(rel, rel + 4096), 480);
      expect(m.r).toBeGreaterThan(0.99);
      expect(Math.abs(m.lag)).toBeLessThanOrEqual(25);
    }
  });

  test("ADPCM at 63 s: at the source's position within a sample (the seek's byte rate is rounded)", async () => {
    const src = await decode(fixturePath(FILES.adpcmLong), 22050);
    const { result, file } = await produce("audio.trim", FILES.adpcmLong, { start: 63.405, end: 64.5 });
    const out = await decode(file, 22050);
    expect(result).toMatchObject({ format: "wav", start: 63.405 });
    const at = Math.round(63.405 * 22050);
    for (const rel of [0, 11025]) {
      const m = lagOf(src, at + rel, out.subarray(rel, rel + 4096), 400);
      expect(m.r).toBeGreaterThan(0.9);
      expect(Math.abs(m.lag)).toBeLessThanOrEqual(1);
    }
  });

  test("ADPCM: a 27 ms window decodes 27 ms (blocks chosen to end with it, at most 1 ms over)", async () => {
    const { result, file } = await produce("audio.trim", FILES.adpcmShort, { start: 0.028, end: 0.055 });
    const out = await decode(file, 44100);
    expect((await ffprobe(file)).streams.find((s) => s.codec_type === "audio")?.codec_name).toBe("adpcm_ms");
    const want = Math.round(0.027 * 44100);
    expect(out.length - want).toBeGreaterThanOrEqual(0);
    expect(out.length - want).toBeLessThanOrEqual(44);
    expect(Math.abs((result.duration ?? 0) - out.length / 44100)).toBeLessThanOrEqual(0.001);
  });

  test("AC-3: [1, 1.5) at the source's position, its encoder's delay hidden, exactly 0.5 s", async () => {
    const src = await decode(fixturePath(FILES.ac3), 48000);
    const { result, file } = await produce("audio.trim", FILES.ac3, { start: 1, end: 1.5 });
    const out = await decode(file, 48000);
    expect((await ffprobe(file)).streams.find((s) => s.codec_type === "audio")?.codec_name).toBe("ac3");
    expect(result).toMatchObject({ start: 1 });
    expect(out.length).toBe(24000);
    for (const rel of [0, 12000]) {
      const m = lagOf(src, 48000 + rel, out.subarray(rel, rel + 4096), 480);
      expect(m.r).toBeGreaterThan(0.9);
      expect(Math.abs(m.lag)).toBeLessThanOrEqual(1);
    }
  });
});

describe("audio.trim of MP2: its encoder's delay hidden (it began 10 ms before `start`)", () => {
  test.each([
    [FILES.mp2Mkv, "Matroska"],
    [FILES.mp2Ts, "MPEG-TS"],
  ])("%s (%s): [1, 1.5) at the source's position, exactly 0.5 s", async (source, _container) => {
    // The decode starts at the file's start (an MPEG-TS's at 1.4 s): the window starts at its sample 48,000.
    const src = await decode(fixturePath(source), 48000);
    const { result, file } = await produce("audio.trim", source, { start: 1, end: 1.5 });
    const out = await decode(file, 48000);
    for (const rel of [0, 12000]) {
      const m = lagOf(src, 48000 + rel, out.subarray(rel, rel + 4096), 960);
      expect(m.r).toBeGreaterThan(0.9);
      expect(Math.abs(m.lag), `lag at ${rel} samples`).toBeLessThanOrEqual(1);
    }
    expect(out.length).toBe(24000);
    expect(Math.abs((result.duration ?? 0) - 0.5)).toBeLessThanOrEqual(0.001);
    expect(result).toMatchObject({ format: "m4a", start: 1 });
    // Layer II still, by its frame header: ffmpeg 5.1 names any MPEG audio in MP4 mp3 (its object type).
    expect(await mpegAudioLayer(bins, file, 0)).toBe("mp2");
  });
});

describe("extract-audio: the source's samples, as a player presents them", () => {
  test("MP3 of AAC in MP4 ends where the edit list ends the AAC (not its padded last frame)", async () => {
    // ffmpeg 5.1 decodes the source's last frame whole (45,056 samples); the edit list declares 44,100.
    const { result, file } = await produce("video.extract-audio", FILES.aacPadded, {});
    const out = await decode(file, 44100);
    expect(result.format).toBe("mp3");
    // The LAME tag declares the encoder's delay and padding: a decoder that honours it gives the samples.
    expect(out.length).toBe(44100);
    expect(Math.abs((result.duration ?? 0) - 1)).toBeLessThanOrEqual(0.001);
  });

  test("original of AAC in MP4: reports the length the M4A declares (its padding not presented)", async () => {
    const { result, file } = await produce("video.extract-audio", FILES.aacPadded, { format: "original" });
    expect(result.format).toBe("m4a");
    expect(Math.abs((await probedDuration(file)) - 1)).toBeLessThanOrEqual(0.001);
    expect(Math.abs((result.duration ?? 0) - 1)).toBeLessThanOrEqual(0.001);
  });

  test("original of ALAC 1 tick apart: an M4A whose header states its 3 s", async () => {
    const src = await decode(fixturePath(FILES.alacTicks), 41000);
    const { result, file } = await produce("video.extract-audio", FILES.alacTicks, { format: "original" });
    const out = await decode(file, 41000);
    expect(out.length).toBe(src.length);
    expect(Math.abs((await probedDuration(file)) - src.length / 41000)).toBeLessThanOrEqual(0.001);
    expect(Math.abs((result.duration ?? 0) - src.length / 41000)).toBeLessThanOrEqual(0.001);
  });

  test("original of ALAC in CAF (no packet timed): an M4A that declares its last short packet", async () => {
    const src = await decode(fixturePath(FILES.alacCaf), 48000);
    expect(src.length).toBe(144000);
    const { result, file } = await produce("video.extract-audio", FILES.alacCaf, { format: "original" });
    const out = await decode(file, 48000);
    expect(result.format).toBe("m4a");
    expect(Buffer.from(out.buffer, out.byteOffset, out.byteLength)).toEqual(
      Buffer.from(src.buffer, src.byteOffset, src.byteLength),
    );
    // The M4A's own tables: 3 s (was 2.987: the last packet, 640 samples, declared lasting nothing).
    expect(Math.abs((await probedDuration(file)) - 3)).toBeLessThanOrEqual(0.001);
    expect(Math.abs((result.duration ?? 0) - 3)).toBeLessThanOrEqual(0.001);
  });

  test("original of AAC in a fragmented MP4: ends where the source's last trun sample does", async () => {
    // Both read by the corpus checker's own table reader (mp4-tables.ts: trun, stts, edit lists).
    const tablesEnd = async (file: string) => presentationOf(await readFile(file), 0)!.end;
    const source = await tablesEnd(fixturePath(FILES.aacFrag));
    expect(source * 48000).toBeCloseTo(145024, 3);
    const { result, file } = await produce("video.extract-audio", FILES.aacFrag, { format: "original" });
    expect(result.format).toBe("m4a");
    // Was 145,408 samples (the last frame's 384 of padding declared as audio).
    expect(Math.abs((await tablesEnd(file)) - source)).toBeLessThanOrEqual(1 / 48000);
    expect(Math.abs((result.duration ?? 0) - source)).toBeLessThanOrEqual(0.001);
  });

  test("original of an MP3 without an encoder-delay tag: every sample from the first", async () => {
    const src = await decode(fixturePath(FILES.mp3Bare), 44100);
    const { result, file } = await produce("video.extract-audio", FILES.mp3Bare, { format: "original" });
    const out = await decode(file, 44100);
    expect(result.format).toBe("mp3");
    expect(out.length).toBe(src.length);
    expect(Buffer.from(out.buffer, out.byteOffset, out.byteLength)).toEqual(
      Buffer.from(src.buffer, src.byteOffset, src.byteLength),
    );
  });

  test("original of Opus in WebM: the Ogg copy ends where the WebM trims its last packet", async () => {
    const src = await decode(fixturePath(FILES.opusWebm), 48000);
    expect(src.length).toBe(48480);
    const { result, file } = await produce("video.extract-audio", FILES.opusWebm, { format: "original" });
    const out = await decode(file, 48000);
    expect(result.format).toBe("opus");
    expect(out.length).toBe(src.length);
    expect(Math.abs((result.duration ?? 0) - 1.01)).toBeLessThanOrEqual(0.001);
  });
});
