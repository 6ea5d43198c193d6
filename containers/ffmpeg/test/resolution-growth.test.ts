/**
 * A stream whose resolution grows after the probe looked (issue 13): the probe sees the first frames only, so
 * checkVideoLimits passes a video that switches mid-stream to frames beyond the pixel cap. Every decoder runs
 * with `-max_pixels` (mediaInputArgs), so ffmpeg refuses those frames instead of allocating them, and the
 * job answers 413 naming the limit rather than a result with frames silently missing.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import { mediaInputArgs } from "../src/pipeline/input-args.ts";
import { LIMITS } from "../src/security/limits.ts";
import {
  assertSafeMessage,
  errorOf,
  fixturePath,
  media,
  startTestEngine,
  type TestEngine,
} from "./support/engine.ts";
import { publish } from "./support/fixture-files.ts";

const exec = promisify(execFile);
/**
 * 12 s of 320×240 H.264, then 2 frames of 8192×4608 (37.7 MP, just over the cap) from 12 s on, in MPEG-TS:
 * the growth lies past the 10 s that ffprobe and ffmpeg analyse before they start (LIMITS.analyzeDurationUs;
 * growth inside that window is met, and refused, by that analysis already).
 */
const GROWING = "growing-320x240-to-8192x4608-at-12s.ts";

async function makeGrowing(): Promise<void> {
  const file = fixturePath(GROWING);
  if (existsSync(file)) return;
  const { ffmpeg } = resolveBinaries(process.env);
  const segment = (source: string, extra: string[], to: string) =>
    exec(ffmpeg, [
      ...["-v", "error", "-y", "-f", "lavfi", "-i", source, ...extra],
      ...["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-f", "mpegts", to],
    ]);
  // Under names of its own, renamed into place whole (fixture-files.ts): other runs and clones make and read
  // the same file in the machine's fixture folder at the same time. The segments go with the partial.
  await publish(file, async (out) => {
    await segment("testsrc2=size=320x240:rate=25", ["-t", "12"], `${out}.1`);
    await segment(
      "color=c=blue:size=8192x4608:rate=25",
      ["-frames:v", "2", "-output_ts_offset", "12"],
      `${out}.2`,
    );
    // MPEG-TS segments concatenate byte for byte; the new SPS switches the decoder to the large size.
    await exec("sh", ["-c", 'cat "$1" "$2" > "$3"', "sh", `${out}.1`, `${out}.2`, out]);
  });
}

let engine: TestEngine;
beforeAll(async () => {
  await makeGrowing();
  engine = await startTestEngine({ warmProbes: 0, warmCommands: 0 });
});
afterAll(() => engine.close());

test("every ffmpeg/ffprobe input carries the pixel cap for its video streams", () => {
  const args = mediaInputArgs("mpegts", "file:/x.ts");
  expect(args[args.indexOf("-max_pixels:V") + 1]).toBe(String(LIMITS.maxVideoPixels));
  expect(args.indexOf("-max_pixels:V")).toBeLessThan(args.indexOf("-i"));
});

test("cover art beyond the cap (6000×6000 in an MP3) is not a video stream: still probed", async () => {
  const { ffmpeg, ffprobe } = resolveBinaries(process.env);
  const file = fixturePath("cover-art-6000.mp3");
  if (!existsSync(file)) {
    // Made whole under a name of its own (the art with it), as makeGrowing.
    await publish(file, async (out) => {
      const quiet = ["-v", "error", "-y"];
      const art = `${out}.jpg`;
      await exec(ffmpeg, [...quiet, "-f", "lavfi", "-i", "color=c=red:s=6000x6000", "-frames:v", "1", art]);
      await exec(ffmpeg, [
        ...[...quiet, "-f", "lavfi", "-i", "sine=d=1", "-i", art, "-map", "0", "-map", "1"],
        ...["-c:a", "libmp3lame", "-c:v", "copy", "-disposition:v", "attached_pic", out],
      ]);
    });
  }
  const { stdout, stderr } = await exec(ffprobe, [
    ...["-v", "error", "-of", "json", "-show_streams"],
    ...mediaInputArgs("mp3", `file:${file}`),
  ]);
  const streams = (JSON.parse(stdout) as { streams: { width?: number }[] }).streams;
  expect(streams.map((s) => s.width ?? null)).toEqual([null, 6000]);
  expect(stderr).not.toMatch(/max pixel count/);
}, 180_000);

test("the probe sees only the start: 320×240, within the limits", async () => {
  const res = await engine.job("video.probe", { source_url: media(GROWING) });
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ width: 320, height: 240 });
});

describe.each([
  ["video.watermark", { text: "grows" }],
  ["video.trim", { start: 11, end: 13 }],
  ["video.extract-cover", { time: 12.02, format: "png" }],
] as const)("%s decoding into the large frames", (type, params) => {
  test("413 naming the frame size and the limit, not a result with frames missing", async () => {
    const res = await engine.job(type, { source_url: media(GROWING), params });
    const err = await errorOf(res);
    expect(err).toMatchObject({ status: 413, code: "REQUEST_BODY_TOO_LARGE" });
    expect(err.message).toBe(
      "the source video is 8192×4608 (37.7 megapixels), over the limit of 35.7 megapixels per frame",
    );
    assertSafeMessage(err.message);
  });
});

test("a cover before the growth still succeeds", async () => {
  const res = await engine.job("video.extract-cover", {
    source_url: media(GROWING),
    params: { time: 0.5, format: "png" },
  });
  expect(res.status).toBe(200);
  expect(JSON.parse(res.headers.get("x-engine-result") ?? "{}")).toMatchObject({ width: 320, height: 240 });
  await res.arrayBuffer();
});
