/**
 * Trims and watermarks present what a player presents of the source (issue 29), on the corpus files the
 * issue names, measured here by decoding the source and the output (ffprobe frame times, edit lists
 * honoured; PSNR of decoded pictures against the source frame shown at that time), never by the engine's
 * own window arithmetic:
 * - A: an accurate trim begins with the frame shown at `start` (was the next one, 20–40 ms in; a window
 *   inside one long frame was refused), each later frame at its source time − start, the last one shown
 *   until `end`.
 * - B: a fast trim keeps no frame shown at or after `end` (B-frame streams kept 2–4, a variable-rate source
 *   its long frame whole) and reports the keyframe it starts at (an MJPEG cut reported 0.75 s and began
 *   with the 0.8 s frame).
 * - G: a watermark keeps the source's frames and their times (a variable-rate source got repeated frames).
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
import { tablePresentation } from "./corpus/mp4-tables.ts";
import { CORPUS_DIR as CORPUS } from "./support/corpus.ts";
import { saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";

vi.setConfig({ testTimeout: 300_000 });

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);

interface Frame {
  t: number;
  d: number | null;
}

/** The decoded frames of the first video stream, in presentation order (edit lists honoured). */
async function frames(file: string): Promise<Frame[]> {
  const { stdout } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "v:0"],
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

/** Where a source's video ends as presented: its stated end (an MP4's edit list), else its last frame's. */
async function presentedEnd(file: string, f: Frame[]): Promise<number> {
  const { stdout } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=start_time,duration"],
    ...["-of", "csv=p=0", file],
  ]);
  const [start, duration] = stdout.trim().split(",").map(Number);
  return Number.isFinite(duration) && Number.isFinite(start) ? start! + duration! : videoEnd(f);
}

/** The source frame shown at `t`: the last one presented at or before it. */
const shownAt = (f: Frame[], t: number): Frame => f.filter((x) => x.t <= t + 1e-6).at(-1)!;

/** One decoded picture, grey, at the file's size: the first frame at or after `t` (frame-accurate seek). */
async function picture(file: string, t: number): Promise<Buffer> {
  const { stdout } = await exec(
    bins.ffmpeg,
    [
      ...[
        "-v",
        "error",
        "-ss",
        t.toFixed(6),
        "-i",
        file,
        "-frames:v",
        "1",
        "-vf",
        "scale=160:90,format=gray",
      ],
      ...["-f", "rawvideo", "pipe:1"],
    ],
    { encoding: "buffer", maxBuffer: 1 << 24 },
  );
  return stdout;
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

async function run(
  type: string,
  name: string,
  params: Record<string, unknown>,
): Promise<{ result: EngineResult; file: string; out: Frame[]; src: Frame[] }> {
  const res = await engine.job(type, { source_url: `${base}/${name}`, params });
  expect(
    res.status,
    await res
      .clone()
      .text()
      .catch(() => ""),
  ).toBe(200);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  const file = await saveBody(res, "out.mp4");
  return { result, file, out: await frames(file), src: await frames(path.join(CORPUS, name)) };
}

/** Every output frame at its source time − start, the first at 0; the last shown until `end` − start. */
function expectWindow(out: Frame[], src: Frame[], start: number, end: number) {
  const shown = src.filter((f) => f.t > start + 1e-6 && f.t < end - 1e-6).map((f) => f.t - start);
  expect(out.map((f) => f.t)).toHaveLength(shown.length + 1);
  expect(out[0]!.t).toBeCloseTo(0, 3);
  for (const [i, f] of out.slice(1).entries()) expect(Math.abs(f.t - shown[i]!)).toBeLessThan(0.001);
  expect(Math.abs(videoEnd(out) - (end - start))).toBeLessThan(0.001);
}

describe.skipIf(!existsSync(CORPUS))("what a player presents (issue 29)", () => {
  test("A: accurate trim starting between two frames begins with the frame shown at start", async () => {
    const { result, file, out, src } = await run("video.trim", "av1-aac.mp4", {
      start: 1.216,
      duration: 0.75,
    });
    expectWindow(out, src, 1.216, 1.966);
    const first = await picture(file, 0);
    const shown = shownAt(src, 1.216).t;
    const next = src.find((f) => f.t > 1.216)!.t;
    const source = path.join(CORPUS, "av1-aac.mp4");
    // The 1.2 s picture, not the 1.24 s one that follows it.
    expect(psnr(first, await picture(source, shown))).toBeGreaterThan(
      psnr(first, await picture(source, next)) + 6,
    );
    expect(result).toMatchObject({ start: 1.216, end: 1.966, duration: 0.75, copied: false });
  });

  test.each([
    ["fixture-imovie.mp4", 0.01, 0.02],
    ["fixture.avi", 0.021, 0.013],
    ["fixture.mov", 0.017, 0.025],
    ["cursed-vfr.mp4", 1.5, 1.5],
    // A frame exactly at the end (1.8 s, millisecond time base): not kept, whatever the seek's rounding.
    ["vp8-alpha.webm", 0.9, 0.9],
  ])("A: accurate trim of %s from %s s for %s s: the frames shown then", async (name, start, duration) => {
    const { result, out, src } = await run("video.trim", name, { start, duration });
    expectWindow(out, src, start, start + duration);
    expect(Math.abs(result.duration! - videoEnd(out))).toBeLessThanOrEqual(0.001);
  });

  test("B: fast trim of a B-frame H.264 keeps no frame shown at or after end", async () => {
    const { result, file, out } = await run("video.trim", "video.mp4", {
      start: 1,
      end: 3.466,
      mode: "fast",
    });
    expect(result.copied).toBe(true);
    const end = 3.466 - (result.start ?? 0);
    expect(out.every((f) => f.t < end)).toBe(true);
    // Where the video stops, by the file's own tables (its edit list ends the last frame at `end`; ffmpeg 5.1
    // gives the last sample of a track with composition offsets a duration guessed from the frame rate).
    const shown = (await tablePresentation(file, 0))!.end;
    expect(Math.abs(shown - end)).toBeLessThanOrEqual(1e-3);
    expect(Math.abs(result.duration! - shown)).toBeLessThanOrEqual(0.001);
    expect(Math.abs(result.end! - (result.start ?? 0) - shown)).toBeLessThanOrEqual(0.001);
  });

  test("B: fast trim of a variable-rate video ends its long frame at end", async () => {
    const { result, out, src } = await run("video.trim", "cursed-vfr.mp4", {
      start: 1,
      end: 3,
      mode: "fast",
    });
    // Copied, every run: the copies that differed run to run (one encoded again, one not decoding) were the
    // early pass of speculate.ts editing the same file as the real one.
    expect(result.copied).toBe(true);
    const start = result.start ?? 0;
    // A copy starts at a keyframe's time.
    expect(shownAt(src, start).t).toBeCloseTo(start, 3);
    expect(Math.abs(videoEnd(out) - (3 - start))).toBeLessThan(0.001);
    expect(result.end).toBeCloseTo(3, 3);
  });

  test("B: fast trim of an MJPEG MOV reports the frame it starts at, shown at start", async () => {
    const { result, file, out, src } = await run("video.trim", "fixture-mjpeg.mov", {
      start: 0.75,
      end: 1.2,
      mode: "fast",
    });
    expect(result.copied).toBe(true);
    // Every MJPEG frame is a keyframe: the one shown at 0.75 s (0.7 s).
    expect(result.start).toBeCloseTo(shownAt(src, 0.75).t, 3);
    expect(out[0]!.t).toBeCloseTo(0, 3);
    const first = await picture(file, 0);
    const source = path.join(CORPUS, "fixture-mjpeg.mov");
    expect(psnr(first, await picture(source, result.start!))).toBeGreaterThan(40);
    expect(Math.abs(videoEnd(out) - (1.2 - result.start!))).toBeLessThan(0.001);
  });

  test.each([
    ["cursed-vfr.mp4", 63],
    ["fixture.mov", 5],
  ])("G: a watermark of %s keeps its %s frames and their times", async (name, count) => {
    const { result, out, src } = await run("video.watermark", name, {
      watermark_url: `${base}/_logo/logo.png`,
    });
    expect(src).toHaveLength(count);
    expect(out).toHaveLength(count);
    for (const [i, f] of out.entries()) expect(Math.abs(f.t - (src[i]!.t - src[0]!.t))).toBeLessThan(0.001);
    const end = await presentedEnd(path.join(CORPUS, name), src);
    expect(Math.abs(videoEnd(out) - (end - src[0]!.t))).toBeLessThan(0.001);
    expect(Math.abs(result.duration! - videoEnd(out))).toBeLessThanOrEqual(0.001);
  });
});
