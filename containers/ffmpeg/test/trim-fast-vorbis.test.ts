/**
 * A fast trim of a WebM with Vorbis audio holds the source's samples over the window it reports, exactly
 * (issue 29): its audio, encoded again with libvorbis, starts at 0 and decodes to the window's length.
 * Before, libvorbis's first packet (which decodes to no sample) was stamped 2.9 ms before 0 and ffmpeg 5.1's
 * WebM muxer shifted every stream by it: the audio began 3 ms late; and the padding libvorbis adds to its
 * last block was not declared: the audio decoded 19–21 ms past the window (bbb-trailer-vp8.webm {2.143,
 * 4.286}: 3.708 s for 3.686; fixture.webm {0.027, 0.055}: 0.063 for 0.042), and the duration reported
 * described the video only.
 *
 * Truth by its own route: the source's and the output's audio decoded sample by sample (first frame's time,
 * samples counted), the window's end from the source's decoded video frames, and where the output's samples
 * sit in the source by cross-correlation of the decoded waveforms at the native rate.
 */
import { execFile } from "node:child_process";
import { createReadStream, existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import type { EngineResult } from "../src/protocol.ts";
import { bestLag } from "./corpus/measure.ts";
import { CORPUS_DIR } from "./support/corpus.ts";
import { fixturePath, media, saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { ensureFixtures, ffmpeg } from "./support/ffmpeg-fixture.ts";
import { decodedFrames } from "./support/frames.ts";

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);

/** VP8 (a keyframe every second) + Vorbis (white noise: every lag tells) at 44.1 kHz in WebM, 3 s. */
const WEBM = "fast-vorbis.webm";

let engine: TestEngine;
let server: http.Server | undefined;
let corpusBase = "";

beforeAll(async () => {
  await ensureFixtures({
    [WEBM]: (out) =>
      ffmpeg([
        ...["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30:duration=3"],
        ...["-f", "lavfi", "-i", "anoisesrc=d=3:c=white:r=44100:a=0.3:seed=29"],
        ...["-c:v", "libvpx", "-b:v", "500k", "-g", "30", "-keyint_min", "30", "-auto-alt-ref", "0"],
        ...["-c:a", "libvorbis", "-q:a", "6", "-ac", "1", out],
      ]),
  });
  engine = await startTestEngine();
  if (existsSync(CORPUS_DIR)) {
    server = http.createServer(async (req, res) => {
      const file = path.join(CORPUS_DIR, path.normalize(decodeURIComponent(req.url ?? "/")));
      const info = file.startsWith(CORPUS_DIR) ? await stat(file).catch(() => null) : null;
      if (info === null || !info.isFile()) return void res.writeHead(404).end();
      res.writeHead(200, { "content-length": info.size });
      createReadStream(file).pipe(res);
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    corpusBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
}, 120_000);
afterAll(async () => {
  await engine?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(null));
});

interface Decoded {
  /** Time of the first decoded sample. */
  first: number;
  rate: number;
  /** Mono samples, every one the decoder outputs. */
  pcm: Int16Array;
}

/** The first audio stream decoded: its first frame's time and every sample (mono, native rate). */
async function decodeAudio(file: string): Promise<Decoded> {
  const { stdout: probe } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=sample_rate"],
    ...["-show_entries", "frame=best_effort_timestamp_time", "-read_intervals", "%+1", "-of", "json", file],
  ]);
  const json = JSON.parse(probe) as {
    streams: { sample_rate: string }[];
    frames: { best_effort_timestamp_time: string }[];
  };
  const rate = Number(json.streams[0]!.sample_rate);
  const { stdout } = await exec(
    bins.ffmpeg,
    ["-v", "error", "-i", file, "-map", "0:a:0", "-ac", "1", "-f", "s16le", "-"],
    { encoding: "buffer", maxBuffer: 256 * 1024 * 1024 },
  );
  const pcm = new Int16Array(stdout.buffer, stdout.byteOffset, Math.floor(stdout.length / 2));
  return { first: Number(json.frames[0]!.best_effort_timestamp_time), rate, pcm };
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

async function expectExactAudio(url: string, source: string, start: number, end: number) {
  const res = await engine.job("video.trim", { source_url: url, params: { start, end, mode: "fast" } });
  expect(res.status, await res.clone().text()).toBe(200);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  const file = await saveBody(res, `fast-vorbis.${result.format}`);
  expect(result).toMatchObject({ format: "webm", copied: true });
  const key = await keyframeAtOrBefore(source, start);
  expect(result.start).toBeCloseTo(key, 3);
  // The window a player presents: from the keyframe to `end`, or to where the source's video ends before it.
  const frames = await decodedFrames(source);
  const videoEnd = Math.max(...frames.map((f) => f.t + f.duration));
  const src = await decodeAudio(source);
  const out = await decodeAudio(file);
  expect(out.rate).toBe(src.rate);
  const windowEnd = Math.min(end, videoEnd, src.first + src.pcm.length / src.rate);
  // Starts at 0 (one WebM tick: 1 ms), and decodes to the window's length (to the millisecond).
  expect(Math.abs(out.first)).toBeLessThanOrEqual(0.001);
  const length = out.pcm.length / out.rate;
  expect(Math.abs(out.first + length - (windowEnd - key))).toBeLessThanOrEqual(0.001);
  expect(Math.abs((result.duration ?? 0) - (windowEnd - key))).toBeLessThanOrEqual(0.001);
  // Each sample is the source's at its time + key: correlated where the window is long enough to tell.
  const chunk = Math.round(0.1 * out.rate);
  for (const at of [0.05, (windowEnd - key) / 2]) {
    const i = Math.round((at - out.first) * out.rate);
    if (i < 0 || i + chunk > out.pcm.length) continue;
    const expected = Math.round((key + at - src.first) * src.rate);
    const found = bestLag(src.pcm, expected, out.pcm.subarray(i, i + chunk), 441, 44);
    expect(found, `correlation at ${at} s`).not.toBeNull();
    expect(found!.corr).toBeGreaterThan(0.9);
    // Within a millisecond (44 samples): before, 3 ms late.
    expect(Math.abs(found!.lag), `lag at ${at} s (samples)`).toBeLessThanOrEqual(44);
  }
  return { key, length };
}

describe("video.trim fast of a WebM with Vorbis: the source's samples over the window, exactly", () => {
  test("generated VP8 + Vorbis {1.2, 2.45}", { timeout: 120_000 }, async () => {
    // The keyframe of 1 s, at 1.003: ffmpeg shifted the fixture's streams by libvorbis's first packet too.
    const { key, length } = await expectExactAudio(media(WEBM), fixturePath(WEBM), 1.2, 2.45);
    expect(key).toBeCloseTo(1.003, 3);
    expect(length).toBeGreaterThan(1.4);
  });
  test.skipIf(!existsSync(CORPUS_DIR))(
    "bbb-trailer-vp8.webm {2.143, 4.286}",
    { timeout: 120_000 },
    async () => {
      const name = "bbb-trailer-vp8.webm";
      const { key } = await expectExactAudio(
        `${corpusBase}/${name}`,
        path.join(CORPUS_DIR, name),
        2.143,
        4.286,
      );
      expect(key).toBeCloseTo(0.6, 3);
    },
  );
  test.skipIf(!existsSync(CORPUS_DIR))("fixture.webm {0.027, 0.055}", { timeout: 120_000 }, async () => {
    const name = "fixture.webm";
    const { key } = await expectExactAudio(
      `${corpusBase}/${name}`,
      path.join(CORPUS_DIR, name),
      0.027,
      0.055,
    );
    expect(key).toBeCloseTo(0.003, 3);
  });
});
