/**
 * AMR-NB exactly (issue 29, fixture.3gp): no encoder here writes AMR, so audio.trim and extract-audio
 * `original` copy its frames into 3GP, whose edit list says which samples play. The truth is the corpus's
 * fixture.3gp decoded by ffmpeg (its own edit list starts 27 samples into its first frame, and its stts
 * does not follow its 160-sample frames: deltas of 12, 232, 305), and the output decoded the same way:
 * the output's samples must be the source's from `start` (found by cross-correlation, then sample for
 * sample once the decoder's state has converged), and last exactly end − start as the file presents them
 * (ffmpeg 5.1 decodes the last frame whole: at most 20 ms more). Needs the corpus (../shared/corpus).
 */
import { execFile } from "node:child_process";
import { createReadStream, existsSync } from "node:fs";
import { mkdtemp, stat } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import type { EngineResult } from "../src/protocol.ts";
import { CORPUS_DIR } from "./support/corpus.ts";
import { ffprobe, media, saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { FIXTURES } from "./support/media.ts";

vi.setConfig({ testTimeout: 120_000 });

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);
const SOURCE = path.join(CORPUS_DIR, "fixture.3gp");
const RATE = 8000;
/** One AMR frame: the most a decoder that plays the last frame whole (or ignores the edit list) adds. */
const FRAME = 160;
/** Samples after which a decoder started at the cut has converged on the source's decode (100 ms). */
const WARM = 800;

/** The first audio stream decoded to mono s16 at its own rate (edit list honoured). */
async function pcm(file: string, opts: { ignoreEditlist?: boolean } = {}): Promise<Int16Array> {
  const { stdout } = await exec(
    bins.ffmpeg,
    [
      ...["-v", "error", ...(opts.ignoreEditlist === true ? ["-ignore_editlist", "1"] : []), "-i", file],
      ...["-map", "0:a:0", "-ac", "1", "-ar", String(RATE), "-c:a", "pcm_s16le", "-f", "s16le", "pipe:1"],
    ],
    { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
  );
  return new Int16Array(stdout.buffer, stdout.byteOffset, stdout.length / 2);
}

/**
 * Samples the file presents: from its first decoded frame's time to where its last frame's stated duration
 * ends (an MP4/3GP edit list or last sample duration), as ffprobe lists the decoded frames.
 */
async function presentedSamples(file: string): Promise<number> {
  const { stdout } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "a:0", "-show_entries"],
    ...["frame=best_effort_timestamp_time,pkt_duration_time", "-of", "json", file],
  ]);
  const frames = (
    JSON.parse(stdout) as { frames: { best_effort_timestamp_time: string; pkt_duration_time: string }[] }
  ).frames;
  const last = frames.at(-1)!;
  const end = Number(last.best_effort_timestamp_time) + Number(last.pkt_duration_time);
  return Math.round((end - Number(frames[0]!.best_effort_timestamp_time)) * RATE);
}

/** The lag (samples, within ±max) at which `part` best matches `whole` from `at`, and its correlation. */
function bestLag(
  whole: Int16Array,
  at: number,
  part: Int16Array,
  max: number,
): { lag: number; corr: number } {
  let best = { lag: 0, corr: -2 };
  for (let lag = -max; lag <= max; lag++) {
    let xy = 0;
    let xx = 0;
    let yy = 0;
    for (let i = 0; i < part.length; i++) {
      const a = part[i]!;
      const b = whole[at + lag + i] ?? 0;
      xy += a * b;
      xx += a * a;
      yy += b * b;
    }
    const corr = xx === 0 || yy === 0 ? 0 : xy / Math.sqrt(xx * yy);
    if (corr > best.corr) best = { lag, corr };
  }
  return { lag: best.lag, corr: best.corr };
}

let engine: TestEngine;
let server: http.Server;
let sourceUrl: string;
let source: Int16Array;
/** Samples the source presents (its edit list: 5.574 s). */
let sourceLength: number;

const present = existsSync(SOURCE);

/**
 * fixture.3gp's AMR in a 3GP whose edit list starts 1,000 samples in: six whole frames hidden (the demuxer
 * gives them marked discarded, a copy keeps them) and 40 samples of the seventh. Made from the corpus file
 * by a stream copy stamped 1,000 samples before 0 (no AMR encoder here).
 */
let hidden: string;
let hiddenUrl: string;

beforeAll(async () => {
  if (!present) return;
  const dir = await mkdtemp(path.join(os.tmpdir(), "amr-exact-"));
  hidden = path.join(dir, "hidden.3gp");
  const raw = path.join(dir, "source.amr");
  await exec(bins.ffmpeg, ["-v", "error", "-i", SOURCE, "-map", "0:a:0", "-c:a", "copy", "-f", "amr", raw]);
  await exec(bins.ffmpeg, [
    ...["-v", "error", "-f", "amr", "-i", raw, "-c:a", "copy"],
    ...["-bsf:a", "setts=ts=N*160-1000", "-f", "3gp", hidden],
  ]);
  const files: Record<string, string> = { "/fixture.3gp": SOURCE, "/hidden.3gp": hidden };
  server = http.createServer(async (req, res) => {
    const file = files[req.url ?? ""];
    if (file === undefined) return void res.writeHead(404).end();
    const { size } = await stat(file);
    res.writeHead(200, { "content-length": size, "content-type": "application/octet-stream" });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sourceUrl = `${base}/fixture.3gp`;
  hiddenUrl = `${base}/hidden.3gp`;
  [source, sourceLength] = await Promise.all([pcm(SOURCE), presentedSamples(SOURCE)]);
  engine = await startTestEngine();
}, 120_000);
afterAll(async () => {
  await engine?.close();
  server?.close();
});

async function produce(type: string, params: Record<string, unknown>, url = sourceUrl) {
  const res = await engine.job(type, { source_url: url, params });
  if (res.status !== 200) throw new Error(`${type} answered ${res.status}: ${await res.text()}`);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  const file = await saveBody(res, `out.${result.format}`);
  return { result, file };
}

/** The output holds the source's samples [from, to): position, sample-exact content, presented length. */
async function expectWindow(
  file: string,
  result: EngineResult,
  from: number,
  to: number,
  src: Int16Array = source,
): Promise<void> {
  const probe = await ffprobe(file);
  expect(probe.streams.map((s) => s.codec_name)).toEqual(["amr_nb"]);
  const out = await pcm(file);
  // Where two stretches of the output (from 100 ms in, and from its middle) are in the source: at from + t
  // exactly. The first 100 ms differ a little: the cut restarts the decoder's state (its filters, pitch).
  for (const rel of [WARM, Math.max(WARM, Math.floor((to - from) / 2) - 800)]) {
    const part = out.subarray(rel, rel + 800);
    const m = bestLag(src, from + rel, part, 400);
    expect(m.lag).toBe(0);
    expect(m.corr).toBeGreaterThan(0.99);
  }
  // From there on the very samples (a stray one may differ by the state's rounding).
  let same = 0;
  const upTo = Math.min(out.length, to - from);
  for (let i = WARM; i < upTo; i++) if (out[i] === src[from + i]) same++;
  expect(same / (upTo - WARM)).toBeGreaterThan(0.999);
  // Presented: exactly the window; decoded: the last frame whole at most.
  const shown = await presentedSamples(file);
  expect(shown).toBe(to - from);
  expect(out.length - shown).toBeGreaterThanOrEqual(0);
  expect(out.length - shown).toBeLessThan(FRAME);
  // A player ignoring the edit list hears at most a frame more at each end, nothing else.
  const raw = await pcm(file, { ignoreEditlist: true });
  expect(raw.length - (to - from)).toBeLessThan(2 * FRAME);
  expect(Math.abs((result.duration ?? 0) - shown / RATE)).toBeLessThanOrEqual(0.001);
  expect(Math.abs(Number(probe.format.duration) - shown / RATE)).toBeLessThanOrEqual(0.001);
  expect(result.format).toBe("3gp");
  expect(probe.format.format_name).toMatch(/3gp/);
}

describe.skipIf(!present)("AMR-NB in 3GP, exactly (fixture.3gp of the corpus)", () => {
  test("extract-audio original: the source's samples as it presents them", async () => {
    const { result, file } = await produce("video.extract-audio", { format: "original" });
    await expectWindow(file, result, 0, sourceLength);
  });

  test.each([
    [1.672, 3.344],
    [1, 2],
    [0.01, 0.5],
  ])("audio.trim [%s, %s): the window's samples from start", async (start, end) => {
    const { result, file } = await produce("audio.trim", { start, end });
    await expectWindow(file, result, Math.round(start * RATE), Math.round(end * RATE));
    expect(result).toMatchObject({ start, copied: true });
    expect(result.end).toBeCloseTo(start + (result.duration ?? 0), 3);
  });

  test("a source whose edit list hides whole frames: audio.trim and original from where it starts", async () => {
    const src = await pcm(hidden);
    // The truth: 279 frames of 160 samples, 1,000 of them hidden.
    expect(src.length).toBe(279 * FRAME - 1000);
    const { result: whole, file: wholeFile } = await produce(
      "video.extract-audio",
      { format: "original" },
      hiddenUrl,
    );
    await expectWindow(wholeFile, whole, 0, await presentedSamples(hidden), src);
    const { result, file } = await produce("audio.trim", { start: 1, end: 2 }, hiddenUrl);
    await expectWindow(file, result, RATE, 2 * RATE, src);
  });

  test("audio.trim past the source's end: until where its edit list ends it", async () => {
    const { result, file } = await produce("audio.trim", { start: 4, end: 9 });
    await expectWindow(file, result, 4 * RATE, sourceLength);
    expect(result.start).toBe(4);
  });
});

/**
 * The audio of video operations on the AMR source, re-encoded (AAC in MP4; FLAC beside a fast trim's copied
 * H.263 in Matroska): at the source's position by cross-correlation, and ending where the source's does.
 * Cut by the source's timestamps, which do not follow its frames, it was 12 ms (trim) and 18 ms (fast trim)
 * early, and the watermark's ran 22 ms past the source's end.
 */
describe.skipIf(!present)("the audio of video operations on AMR-NB (fixture.3gp)", () => {
  /** The lag (samples) of the output's audio from `rel` against the source's from `from` + `rel`. */
  async function lagAt(file: string, from: number, rel: number): Promise<number> {
    const out = await pcm(file);
    const m = bestLag(source, from + rel, out.subarray(rel, rel + 800), 400);
    expect(m.corr).toBeGreaterThan(0.9);
    return m.lag;
  }

  test.each([
    ["accurate", 1.672],
    ["fast", 1.6],
  ])("video.trim %s {1.672, 3.344}: the audio at the source's position", async (mode, start) => {
    const { result, file } = await produce("video.trim", { start: 1.672, end: 3.344, mode });
    expect(result.start).toBe(start);
    for (const rel of [WARM, 4 * WARM]) {
      // Within a millisecond (8 samples): an encode's filters may move it by a sample or two.
      expect(Math.abs(await lagAt(file, Math.round(start * RATE), rel))).toBeLessThanOrEqual(8);
    }
  });

  test("video.watermark: the audio where the source's is, ending where it ends", async () => {
    const { file } = await produce("video.watermark", { watermark_url: media(FIXTURES.logo) });
    for (const rel of [WARM, 20 * WARM]) expect(Math.abs(await lagAt(file, 0, rel))).toBeLessThanOrEqual(8);
    // As the file states it (ffmpeg 5.1 decodes an AAC's last frame whole: issue 29 class C).
    expect(Math.abs((await presentedSamples(file)) - sourceLength)).toBeLessThanOrEqual(28);
  });
});
