/**
 * The player's timeline of a source, where ffmpeg's differs from it (issue 29, the rows the corpus checker
 * still found wrong after its first fixes), measured here by decoding source and output (ffprobe's frame
 * times, edit lists honoured; PSNR of decoded pictures), never by the engine's own arithmetic:
 * - a source whose earliest timestamp is below 0 (Opus pre-skip in WebM at −0.007 s): a player's 0 is 0,
 *   ffmpeg's is −0.007, so trims and watermarks put every frame 7 ms late, and a cover at `time` was
 *   the frame shown 7 ms earlier;
 * - frames one tick of their time base apart (MJPEG in MOV 1/10 s, Theora 1/30 s, AVI 1/25 s): an accurate
 *   trim's seek halfway between two frames was a tie, and the frame shown at `start` was lost; a cover's
 *   `trim` at 1.002 s rounded to 1.000 s in a 40 ms time base and gave the 0.96 s frame for 1.0 s;
 * - a WebM of one 8×8 frame without a duration, shown for its header's 1.0 s: a trim inside it was refused
 *   415, a watermark lasted 1 ms, the probe said 0.001 s;
 * - the probe of an AVI whose header counts only its video (0.042 s of 0.092), of an Ogg whose last page
 *   read after a seek has a negative duration (97397 s), of a fragmented MP4 whose first AAC packet sits
 *   80 ms before the rest (5.136 s for video to 5.080 and 5.056 s of audio);
 * - a watermark of that fragmented MP4 moved its video from 0.080 s to 0.
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

vi.setConfig({ testTimeout: 300_000 });

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);

interface Frame {
  t: number;
  d: number | null;
}

/** The decoded frames of a stream, in presentation order (edit lists honoured). */
async function frames(file: string, stream = "v:0"): Promise<Frame[]> {
  const { stdout } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", stream],
    ...["-show_entries", "frame=best_effort_timestamp_time,pkt_duration_time", "-of", "csv=p=0", file],
  ]);
  return stdout
    .split("\n")
    .map((l) => l.split(",").filter((x) => x !== ""))
    .filter((r) => r.length > 0 && Number.isFinite(Number(r[0])))
    .map((r) => ({ t: Number(r[0]), d: r[1] === undefined || r[1] === "N/A" ? null : Number(r[1]) }))
    .sort((a, b) => a.t - b.t);
}

/** Where the video ends as presented: the last frame's time plus its duration. */
const videoEnd = (f: Frame[]): number => f.at(-1)!.t + (f.at(-1)!.d ?? 0);

/** The source frame shown at `t` (a player's time: from 0): the last one presented at or before it. */
const shownAt = (f: Frame[], t: number): Frame => f.filter((x) => x.t <= t + 1e-6).at(-1)!;

/** One decoded picture, grey and small: the frame shown at `t` of a file (a player's time, from 0). */
async function picture(file: string, t: number): Promise<Buffer> {
  const { stdout } = await exec(
    bins.ffmpeg,
    [
      ...["-v", "error", "-i", file, "-map", "0:v:0"],
      // Every frame on the player's timeline (copyts: the file's own times), the last one at or before t.
      ...["-copyts", "-vf", `select='lte(t\\,${(t + 1e-6).toFixed(6)})',scale=160:90,format=gray`],
      ...["-vsync", "passthrough", "-f", "rawvideo", "pipe:1"],
    ],
    { encoding: "buffer", maxBuffer: 1 << 28 },
  );
  const size = 160 * 90;
  return stdout.subarray(stdout.length - size);
}

/** PSNR (dB) of two grey pictures of the same size. */
function psnr(a: Buffer, b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i]! - b[i]!) ** 2;
  return sum === 0 ? 99 : 10 * Math.log10((255 * 255) / (sum / a.length));
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

async function job(
  type: string,
  name: string,
  params: Record<string, unknown>,
  ext = "mp4",
): Promise<{ result: EngineResult; file: string }> {
  const res = await engine.job(type, { source_url: `${base}/${name}`, params });
  const body = await res
    .clone()
    .text()
    .catch(() => "");
  expect(res.status, body).toBe(200);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  return { result, file: await saveBody(res, `out.${ext}`) };
}

/**
 * A trim's frames against the source's (times on a player's timeline, from 0): the one shown at `start`
 * at 0, each later one at its time − start, the last shown until `end` − start; the first picture is the
 * shown frame's.
 */
async function expectWindow(name: string, start: number, end: number): Promise<EngineResult> {
  const { result, file } = await job("video.trim", name, { start, end });
  const source = path.join(CORPUS, name);
  const [out, src] = await Promise.all([frames(file), frames(source)]);
  const later = src.filter((f) => f.t > start + 1e-6 && f.t < end - 1e-6).map((f) => f.t - start);
  expect(out[0]!.t).toBeCloseTo(0, 3);
  expect(out.slice(1).map((f) => f.t.toFixed(3))).toEqual(later.map((t) => t.toFixed(3)));
  expect(Math.abs(videoEnd(out) - (end - start))).toBeLessThan(0.0015);
  const first = await picture(file, 0);
  const shown = shownAt(src, start).t;
  const next = src.find((f) => f.t > start + 1e-6)!.t;
  expect(psnr(first, await picture(source, shown))).toBeGreaterThan(psnr(first, await picture(source, next)));
  return result;
}

describe.skipIf(!existsSync(CORPUS))("a player's timeline (issue 29)", () => {
  test("a source starting below 0: a trim counts from the player's 0", async () => {
    // av1-opus.webm: Opus from −0.007 s, video frames at 0.007 + k/25 s.
    const src = await frames(path.join(CORPUS, "av1-opus.webm"));
    expect(src[0]!.t).toBeCloseTo(0.007, 3);
    await expectWindow("av1-opus.webm", 1.202, 2.404);
  });

  test("a source starting below 0: a watermark keeps its frames at their times", async () => {
    const { file } = await job("video.watermark", "av1-opus.webm", {
      watermark_url: `${base}/_logo/logo.png`,
    });
    const [out, src] = await Promise.all([frames(file), frames(path.join(CORPUS, "av1-opus.webm"))]);
    expect(out).toHaveLength(src.length);
    for (const [i, f] of out.entries()) expect(Math.abs(f.t - src[i]!.t)).toBeLessThan(0.001);
  });

  test("a source starting below 0: a cover at 1.01 s is the frame shown then (1.007 s)", async () => {
    const { file } = await job("video.extract-cover", "av1-opus.webm", { time: 1.01, format: "png" }, "png");
    const source = path.join(CORPUS, "av1-opus.webm");
    const [cover, at, before] = await Promise.all([
      picture(file, 0),
      picture(source, 1.01),
      picture(source, 1.0),
    ]);
    expect(psnr(cover, at)).toBeGreaterThan(psnr(cover, before) + 6);
  });

  test.each([
    ["fixture-mjpeg.mov", 0.45, 0.9],
    ["short.ogv", 1.728, 3.455],
    ["xvid-mp3.avi", 1.526, 3.053],
  ])("frames one tick apart: a trim of %s from %s s begins with the frame shown then", async (name, s, e) => {
    await expectWindow(name, s, e);
  });

  test("a cover at 1.0 s of a 25 fps AVI (time base 1/25) is the 1.0 s frame", async () => {
    const { file } = await job("video.extract-cover", "xvid-mp3.avi", { time: 1, format: "png" }, "png");
    const source = path.join(CORPUS, "xvid-mp3.avi");
    const [cover, at, before] = await Promise.all([
      picture(file, 0),
      picture(source, 1),
      picture(source, 0.96),
    ]);
    expect(psnr(cover, at)).toBeGreaterThan(psnr(cover, before) + 6);
  });

  test("a WebM of one frame shown for 1 s: trimmed, watermarked and probed as 1 s", async () => {
    const name = "small-webm.webm";
    const src = await frames(path.join(CORPUS, name));
    expect(src).toHaveLength(1);
    const trim = await job("video.trim", name, { start: 0.3, end: 0.6 });
    expect(videoEnd(await frames(trim.file))).toBeCloseTo(0.3, 3);
    expect(trim.result.duration).toBeCloseTo(0.3, 3);
    const mark = await job("video.watermark", name, { watermark_url: `${base}/_logo/logo.png` });
    expect(videoEnd(await frames(mark.file))).toBeCloseTo(1, 3);
    const probe = await engine.job("video.probe", { source_url: `${base}/${name}`, params: {} });
    expect(((await probe.json()) as { durationSec: number }).durationSec).toBeCloseTo(1, 3);
  });

  test.each([
    // Audio: 4 ADPCM blocks of 1012 samples at 44.1 kHz; the header counts one 0.042 s video frame.
    ["fixture.avi", 0.092],
    // Video to 5.567 s, Vorbis to 5.759 s.
    ["short.ogv", 5.759],
    // Video 0.080–5.080 s; 5.056 s of AAC samples from 0.
    ["fragmented.mp4", 5.08],
  ])("probe of %s: %s s, what decodes", async (name, seconds) => {
    const file = path.join(CORPUS, name);
    const [video, audio] = await Promise.all([frames(file), frames(file, "a:0")]);
    // The truth by decoding: the video's frames' end, the audio's first sample plus its samples' length.
    const probe = (entries: string) =>
      exec(bins.ffprobe, [
        "-v",
        "error",
        "-select_streams",
        "a:0",
        "-show_entries",
        entries,
        "-of",
        "csv=p=0",
        file,
      ]);
    const [rate, counts] = await Promise.all([probe("stream=sample_rate"), probe("frame=nb_samples")]);
    const samples = counts.stdout
      .split("\n")
      .filter((r) => r.trim() !== "")
      .reduce((n, r) => n + Number(r.replace(/,$/, "")), 0);
    const decodedAudio = samples / Number(rate.stdout.trim().replace(/,$/, ""));
    const decoded = Math.max(videoEnd(video), audio[0]!.t + decodedAudio);
    expect(decoded).toBeCloseTo(seconds, 2);
    const res = await engine.job("video.probe", { source_url: `${base}/${name}`, params: {} });
    const { durationSec } = (await res.json()) as { durationSec: number };
    expect(Math.abs(durationSec - decoded)).toBeLessThan(0.005);
  });

  test("a watermark of a fragmented MP4 whose video starts at 0.080 s keeps it there", async () => {
    const { file } = await job("video.watermark", "fragmented.mp4", {
      watermark_url: `${base}/_logo/logo.png`,
    });
    const [out, src] = await Promise.all([frames(file), frames(path.join(CORPUS, "fragmented.mp4"))]);
    expect(src[0]!.t).toBeCloseTo(0.08, 3);
    expect(out).toHaveLength(src.length);
    for (const [i, f] of out.entries()) expect(Math.abs(f.t - src[i]!.t)).toBeLessThan(0.001);
  });
});
