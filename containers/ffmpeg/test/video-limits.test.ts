/**
 * Video pixel and frame-rate caps (issue 13): a 16384×8192 MP4 of ~400 KB drove ffmpeg to 1.6 GiB for one
 * cover; now every job on it is refused from the probe (or the MP4 index) before any ffmpeg starts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { traceCommands } from "../src/pipeline/ffmpeg.ts";
import { checkVideoLimits, LIMITS } from "../src/security/limits.ts";
import { assertSafeMessage, errorOf, media, startTestEngine, type TestEngine } from "./support/engine.ts";
import { FIXTURES } from "./support/media.ts";

let engine: TestEngine;
const started: string[] = [];

beforeAll(async () => {
  // No warm processes: every ffmpeg a job starts is traced.
  engine = await startTestEngine({ warmProbes: 0, warmCommands: 0 });
  traceCommands((bin) => started.push(bin));
});
afterAll(async () => {
  traceCommands(null);
  await engine.close();
});
afterEach(() => {
  started.length = 0;
});

const ffmpegRuns = () => started.filter((bin) => bin === engine.config.binaries.ffmpeg).length;

describe.each([
  ["video.extract-cover", { format: "png" }],
  ["video.trim", { start: 0, end: 0.5 }],
] as const)("%s", (type, params) => {
  test("a 16384×8192 video: 413 naming the pixel limit, no ffmpeg started", async () => {
    const res = await engine.job(type, { source_url: media(FIXTURES.hugeVideo), params });
    const err = await errorOf(res);
    expect(err).toMatchObject({ status: 413, code: "REQUEST_BODY_TOO_LARGE" });
    expect(err.message).toBe(
      "the source video is 16384×8192 (134.2 megapixels), over the limit of 35.7 megapixels per frame",
    );
    assertSafeMessage(err.message);
    expect(ffmpegRuns()).toBe(0);
  });

  test("a 1200 fps video: 413 naming the frame-rate limit", async () => {
    const res = await engine.job(type, { source_url: media(FIXTURES.fastVideo), params });
    const err = await errorOf(res);
    expect(err).toMatchObject({ status: 413, code: "REQUEST_BODY_TOO_LARGE" });
    expect(err.message).toBe("the source video runs at 1200 frames per second, over the limit of 1000");
    expect(ffmpegRuns()).toBe(0);
  });
});

describe("checkVideoLimits", () => {
  const at = (width: number, height: number, fpsValue: number) => ({ video: { width, height, fpsValue } });

  test.each([
    ["8K UHD at 60 fps", at(7680, 4320, 60)],
    ["8192×4352 (the cap)", at(8192, 4352, 30)],
    ["Matroska's 1000 fps of a variable-rate stream", at(8, 8, 1000)],
    ["audio only", { video: null }],
  ])("passes %s", (_, info) => {
    expect(checkVideoLimits(info)).toBe(info);
  });

  test.each([
    ["one pixel row beyond the cap", at(8192, 4353, 30)],
    ["16384×8192", at(16384, 8192, 1)],
    ["1001 fps", at(64, 64, 1001)],
  ])("refuses %s", (_, info) => {
    expect(() => checkVideoLimits(info)).toThrow(/over the limit/);
  });

  test("the cap is H.264/HEVC level 6.2's largest frame", () => {
    expect(LIMITS.maxVideoPixels).toBe(139_264 * 256);
  });
});
