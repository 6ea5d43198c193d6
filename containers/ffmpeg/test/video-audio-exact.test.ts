/**
 * The audio inside video outputs (video.trim accurate, video.watermark) holds the source's samples from
 * `start` to `end` exactly, decoded to that length by ffmpeg 5.1, which plays an MP4's last AAC frame whole
 * whatever padding the file declares (issue 29, the corpus rows of session 19 that were still wrong). The
 * truth is measured here on the source and the output by decoding them with ffmpeg and counting their
 * samples (and, for the position, by cross-correlating them), never by the engine's own arithmetic:
 * - fixture-mjpeg.mov (8 kHz PCM): a trim of 0.45 s decoded 0.512 s, the watermark 1.536 s for 1.5 s;
 * - fixture.webm (VP8 ending at 0.045 s, Vorbis running on): a trim's audio ran past the video it cuts, and
 *   decoded 0.046 s;
 * - matroska-test5-short.mkv (AAC timed in milliseconds, from 12 ms): the watermark's copy kept Matroska's
 *   millisecond durations, its track declared 16 samples shorter than the samples it holds. (The corpus
 *   row's "12 ms short" is ffmpeg 5.1's MP4 demuxer shortening the last packet of a track that starts with
 *   an empty edit: docs/media-support.md.)
 * Skipped when ../shared/corpus is absent.
 */
import { execFile } from "node:child_process";
import { createReadStream, existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import type { EngineResult } from "../src/protocol.ts";
import { CORPUS_DIR as CORPUS } from "./support/corpus.ts";
import { saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { lagOf } from "./support/lag.ts";

vi.setConfig({ testTimeout: 300_000 });

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);

interface Decoded {
  /** Time of the first decoded sample, seconds. */
  first: number;
  /** Samples ffmpeg decodes (edit list honoured; an MP4's last frame whole). */
  samples: number;
  rate: number;
  /** Largest distance (seconds) of a frame's time from the first one's plus the samples decoded before it. */
  drift: number;
}

/** The first audio stream as ffmpeg decodes it: its first frame's time and every sample counted. */
async function decoded(file: string): Promise<Decoded> {
  const { stdout } = await exec(
    bins.ffprobe,
    [
      ...["-v", "error", "-select_streams", "a:0", "-show_entries"],
      ...["stream=sample_rate:frame=best_effort_timestamp_time,nb_samples", "-of", "compact", file],
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  let first: number | null = null;
  let samples = 0;
  let rate = 0;
  let drift = 0;
  for (const line of stdout.split("\n")) {
    const kv = new Map(line.split("|").map((c) => c.split("=", 2) as [string, string]));
    if (line.startsWith("stream|")) rate = Number(kv.get("sample_rate"));
    if (!line.startsWith("frame|")) continue;
    const t = Number(kv.get("best_effort_timestamp_time"));
    first ??= t;
    if (rate > 0) drift = Math.max(drift, Math.abs(t - (first + samples / rate)));
    samples += Number(kv.get("nb_samples") ?? 0);
  }
  return { first: first ?? 0, samples, rate, drift };
}

/** Where an MP4 declares a stream ends: its start plus its stated duration (edit list, stts). */
async function declaredEnd(file: string, stream = "a:0"): Promise<number> {
  const { stdout } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", stream, "-show_entries", "stream=start_time,duration"],
    ...["-of", "csv=p=0", file],
  ]);
  const [start, duration] = stdout.trim().split(",").map(Number);
  return start! + duration!;
}

/** The source's video as presented: first frame's time and where its last frame stops being shown. */
async function videoSpan(file: string): Promise<{ first: number; end: number }> {
  const { stdout } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "v:0"],
    ...["-show_entries", "frame=best_effort_timestamp_time,pkt_duration_time", "-of", "csv=p=0", file],
  ]);
  const rows = stdout
    .trim()
    .split("\n")
    .map((l) => l.split(",").map(Number))
    .sort((a, b) => a[0]! - b[0]!);
  return { first: rows[0]![0]!, end: rows.at(-1)![0]! + rows.at(-1)![1]! };
}

/** The audio decoded to mono 16-bit samples at `rate`, from its first sample (edit lists honoured). */
async function pcm(file: string, rate: number): Promise<Int16Array> {
  const { stdout } = await exec(
    bins.ffmpeg,
    [
      ...["-v", "error", "-i", file, "-map", "0:a:0", "-ac", "1", "-ar", String(rate)],
      ...["-c:a", "pcm_s16le", "-f", "s16le", "pipe:1"],
    ],
    { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
  );
  return new Int16Array(stdout.buffer, stdout.byteOffset, stdout.length / 2);
}

let engine: TestEngine;
let server: http.Server;
let base = "";

beforeAll(async () => {
  if (!existsSync(CORPUS)) return;
  server = http.createServer(async (req, res) => {
    const file = path.join(CORPUS, path.normalize(decodeURIComponent(req.url ?? "/")));
    const info = file.startsWith(CORPUS) ? await stat(file).catch(() => null) : null;
    if (info === null || !info.isFile()) return void res.writeHead(404).end();
    res.writeHead(200, { "content-length": info.size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  engine = await startTestEngine();
});
afterAll(async () => {
  await engine?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

async function run(type: string, name: string, params: Record<string, unknown>) {
  const res = await engine.job(type, { source_url: `${base}/${name}`, params });
  const text = await res
    .clone()
    .text()
    .catch(() => "");
  expect(res.status, text).toBe(200);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  return { result, file: await saveBody(res, "out.mp4") };
}

const logo = () => `${base}/_logo/logo.png`;

describe.skipIf(!existsSync(CORPUS))("audio inside video outputs, by sample positions (issue 29)", () => {
  const mjpeg = path.join(CORPUS, "fixture-mjpeg.mov");

  test("fixture-mjpeg.mov trim {0.45, 0.9}: 8 kHz AAC decodes to the window's samples", async () => {
    const { result, file } = await run("video.trim", "fixture-mjpeg.mov", { start: 0.45, end: 0.9 });
    const src = await decoded(mjpeg);
    const out = await decoded(file);
    expect(out.rate).toBe(src.rate);
    // The source's samples in [0.45, 0.9): 3,600 at 8 kHz (was 4,096: the last frame's padding played).
    const want = Math.round((Math.min(0.9, src.first + src.samples / src.rate) - 0.45) * src.rate);
    expect(Math.abs(out.samples - want)).toBeLessThanOrEqual(1);
    expect(Math.abs((await declaredEnd(file)) - want / src.rate)).toBeLessThanOrEqual(0.001);
    expect(Math.abs(result.duration! - 0.45)).toBeLessThanOrEqual(0.001);
    // At the source's position: the output's samples are the source's from 0.45 s.
    const [a, b] = await Promise.all([pcm(mjpeg, 8000), pcm(file, 8000)]);
    const m = lagOf(a, Math.round(0.45 * 8000), b.subarray(0, 2000), 160);
    if (m.r >= 0.6) expect(Math.abs(m.lag)).toBeLessThanOrEqual(24);
  });

  test("fixture-mjpeg.mov watermark: 8 kHz AAC decodes to the source's samples", async () => {
    const { result, file } = await run("video.watermark", "fixture-mjpeg.mov", { watermark_url: logo() });
    const src = await decoded(mjpeg);
    const out = await decoded(file);
    // 12,000 samples (was 12,288: 1.536 s for 1.5 s).
    expect(Math.abs(out.samples - src.samples)).toBeLessThanOrEqual(1);
    expect(Math.abs(out.first - src.first)).toBeLessThanOrEqual(0.001);
    expect(Math.abs(result.duration! - 1.5)).toBeLessThanOrEqual(0.001);
  });

  test("fixture.webm trim {0.027, 0.055}: the audio of the interval the video presents, decoded so", async () => {
    const webm = path.join(CORPUS, "fixture.webm");
    const { result, file } = await run("video.trim", "fixture.webm", { start: 0.027, end: 0.055 });
    const video = await videoSpan(webm);
    const src = await decoded(webm);
    const out = await decoded(file);
    // The one VP8 frame is shown until 0.045 s; the Vorbis audio runs on to 0.091.
    const until = Math.min(0.055, video.end, src.first + src.samples / src.rate);
    const want = Math.round((until - 0.027) * src.rate);
    expect(out.rate).toBe(src.rate);
    // 794 samples (was 2,048: 0.028 s declared, past the video's end, and the last frame's padding).
    expect(Math.abs(out.samples - want)).toBeLessThanOrEqual(2);
    expect(Math.abs(result.duration! - (until - 0.027))).toBeLessThanOrEqual(0.0015);
  });

  test("matroska-test5-short.mkv watermark: the copied AAC stamped and declared by its samples", async () => {
    const mkv = path.join(CORPUS, "matroska-test5-short.mkv");
    const { result, file } = await run("video.watermark", "matroska-test5-short.mkv", {
      watermark_url: logo(),
    });
    const src = await decoded(mkv);
    const out = await decoded(file);
    expect(out.samples).toBe(src.samples);
    // Starts where the source's does (12 ms in); each frame at its samples' time; the track declared, in
    // ticks of 1/sample rate, as long as its samples (was 96,240 ticks for 96,256 samples).
    expect(Math.abs(out.first - src.first)).toBeLessThanOrEqual(0.001);
    expect(out.drift).toBeLessThanOrEqual(1 / out.rate);
    const { stdout } = await exec(bins.ffprobe, [
      ...["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration_ts,time_base"],
      ...["-of", "csv=p=0", file],
    ]);
    const [timeBase, ticks] = stdout.trim().split(",");
    expect(timeBase).toBe(`1/${out.rate}`);
    expect(Number(ticks)).toBe(out.samples);
    // The end a player that honours the edit list presents: its first sample plus its samples (2.017 s).
    const audioEnd = out.first + out.samples / out.rate;
    const videoEnd = await declaredEnd(file, "v:0");
    expect(Math.abs(result.duration! - Math.max(videoEnd, audioEnd))).toBeLessThanOrEqual(0.001);
  });
});
