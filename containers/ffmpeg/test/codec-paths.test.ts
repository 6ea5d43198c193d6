/**
 * Codec and container paths that answered 500 or a wrong field on real files (issue 12), reproduced with
 * generated files: each now gets a right answer.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { EngineResult } from "../src/protocol.ts";
import { errorOf, ffprobe, media, saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { CODEC_FIXTURE_SECONDS, CODEC_FIXTURES } from "./support/media-codecs.ts";

let engine: TestEngine;
beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine.close());

async function produce(type: string, source: string, params: Record<string, unknown>) {
  const res = await engine.job(type, { source_url: media(source), params });
  if (res.status !== 200) throw new Error(`${type} answered ${res.status}: ${await res.text()}`);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  const file = await saveBody(res, `out.${result.format}`);
  return { result, probe: await ffprobe(file) };
}

describe("codec paths", () => {
  test("fast trim of MJPEG with PCM in MOV copies into Matroska (MP4 holds no PCM)", async () => {
    const { result, probe } = await produce("video.trim", CODEC_FIXTURES.mjpegPcmMov, {
      start: 1,
      end: 2,
      mode: "fast",
    });
    expect(result).toMatchObject({ format: "mkv", width: 160, height: 120 });
    expect(probe.format.format_name).toMatch(/matroska/);
    expect(probe.streams.map((s) => s.codec_name)).toEqual(["mjpeg", "pcm_u8"]);
  });

  test("Opus from 5.1(side) audio keeps its six channels", async () => {
    const { result, probe } = await produce("video.extract-audio", CODEC_FIXTURES.ac3Side, {
      format: "opus",
    });
    expect(result.format).toBe("opus");
    expect(probe.streams).toHaveLength(1);
    expect(probe.streams[0]).toMatchObject({ codec_name: "opus", channels: 6 });
  });

  test("probe of a Matroska file without a duration measures its packets", async () => {
    const res = await engine.job("video.probe", { source_url: media(CODEC_FIXTURES.mkvNoDuration) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { durationSec: number };
    expect(Math.abs(body.durationSec - CODEC_FIXTURE_SECONDS)).toBeLessThanOrEqual(1 / 25 + 1e-6);
  });

  test.each([
    ["a window past where a file cut short really ends", CODEC_FIXTURES.mkvCut, { start: 3, end: 3.5 }],
  ])("a trim of %s is refused, not an empty 200", async (_, source, params) => {
    const res = await engine.job("video.trim", { source_url: media(source), params });
    expect(await errorOf(res)).toMatchObject({
      status: 415,
      message: "the source has no decodable video frame between start and end",
    });
  });

  test.each([
    ["FLAC whose STREAMINFO lies", CODEC_FIXTURES.flacLying, "flac"],
    ["ALAC in Matroska", CODEC_FIXTURES.alacMka, "m4a"],
  ])("the duration of a copy of %s is the audio it holds", async (_, source, format) => {
    const extracted = await produce("video.extract-audio", source, { format: "original" });
    expect(extracted.result.format).toBe(format);
    expect(Math.abs((extracted.result.duration ?? 0) - CODEC_FIXTURE_SECONDS)).toBeLessThanOrEqual(0.1);
    const whole = await produce("audio.trim", source, { start: 0, end: 1000 });
    expect(whole.result).toMatchObject({ format, start: 0, copied: true });
    expect(Math.abs((whole.result.duration ?? 0) - CODEC_FIXTURE_SECONDS)).toBeLessThanOrEqual(0.1);
  });
});
