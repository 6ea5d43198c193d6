/**
 * video.extract-cover at a time after which no frame starts (issue 29, class H): the frame a player shows
 * then is the last one before it, still on screen; the cover is that frame, not a 415. Two sources: a video
 * of 1 s beside audio of 5 s (the container's duration is the audio's), generated here, and
 * ../shared/corpus/small-webm.webm (8×8, one VP8 frame at 0, the segment stating 1 s, no frame rate: its
 * default cover time, the middle, 0.5 s, has no frame at or after it) when that corpus is there. The
 * expected pixels are ffmpeg's own decode of the source's last frame, compared exactly (PNG is lossless).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import { fixturePath, media, saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { type FixtureServer, startFixtureServer } from "./support/fixture-server.ts";

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);
const CORPUS = path.join(import.meta.dirname, "../../../../shared/corpus");
const SHORT_VIDEO = "cover-video-1s-audio-5s.mp4";

/** RGB24 of every frame of a file's first video stream, decoded as ffmpeg decodes it. */
async function frames(file: string): Promise<Buffer[]> {
  const { stdout: size } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height"],
    ...["-of", "csv=p=0", file],
  ]);
  const [w, h] = size.trim().split(",").map(Number);
  const { stdout } = await exec(
    bins.ffmpeg,
    ["-v", "error", "-i", file, "-map", "0:v:0", "-fps_mode", "passthrough"].concat([
      ...["-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"],
    ]),
    { encoding: "buffer", maxBuffer: 1 << 28 },
  );
  const bytes = w! * h! * 3;
  return Array.from({ length: stdout.length / bytes }, (_, i) => stdout.subarray(i * bytes, (i + 1) * bytes));
}

let engine: TestEngine;
let corpus: FixtureServer | null = null;
beforeAll(async () => {
  // testsrc2 changes every frame (a counter and a moving square), so the last frame is unlike the others.
  await exec(bins.ffmpeg, [
    ...["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=1"],
    ...["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=5"],
    ...["-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", fixturePath(SHORT_VIDEO)],
  ]);
  engine = await startTestEngine();
  if (existsSync(path.join(CORPUS, "small-webm.webm"))) corpus = await startFixtureServer(CORPUS);
  else console.log(`skipped: ${CORPUS}/small-webm.webm is not there`);
});
afterAll(async () => {
  await engine.close();
  await corpus?.close();
});

async function cover(source: string, params: Record<string, unknown>) {
  const res = await engine.job("video.extract-cover", { source_url: source, params });
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  return saveBody(res, "cover.png");
}

describe("a cover at a time no frame starts at or after: the frame on screen then", () => {
  test("a 1 s video beside 5 s of audio, at 3 s: its last frame", async () => {
    const source = await frames(fixturePath(SHORT_VIDEO));
    expect(source).toHaveLength(25);
    const got = await frames(await cover(media(SHORT_VIDEO), { time: 3, format: "png" }));
    expect(got).toHaveLength(1);
    expect(got[0]!.equals(source.at(-1)!)).toBe(true);
    expect(got[0]!.equals(source.at(-2)!)).toBe(false);
  });

  test("corpus small-webm.webm (8×8, one frame), default time and 0.9 s: that frame", async () => {
    if (corpus === null) return;
    const url = corpus.url("/media/small-webm.webm");
    const [only] = await frames(path.join(CORPUS, "small-webm.webm"));
    for (const params of [{ format: "png" }, { format: "png", time: 0.9 }]) {
      const got = await frames(await cover(url, params));
      expect(got).toHaveLength(1);
      expect(got[0]!.equals(only!)).toBe(true);
    }
  });
});
