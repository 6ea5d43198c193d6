/**
 * audio.trim presents exactly the asked window for every codec path (issue 12): the decoded audio lasts
 * end − start within one frame, also when the MP4 edit list is ignored, starts and ends where the source's
 * loudness says it should, and every reported field is the file's. The sources are generated
 * (support/media-codecs.ts) in the shapes of the real files whose stream-copied cuts kept extra audio.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import type { EngineResult } from "../src/protocol.ts";
import { audioPresented } from "./corpus/measure.ts";
import { ffprobe, media, saveBody, startTestEngine, type TestEngine } from "./support/engine.ts";
import { CODEC_FIXTURES, decodedRms, rampAmplitude } from "./support/media-codecs.ts";

const bins = resolveBinaries(process.env);

let engine: TestEngine;
beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine.close());

async function trim(source: string, params: Record<string, unknown>) {
  const res = await engine.job("audio.trim", { source_url: media(source), params });
  if (res.status !== 200) throw new Error(`audio.trim answered ${res.status}: ${await res.text()}`);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  const file = await saveBody(res, `cut.${result.format}`);
  return { result, file };
}

const F = CODEC_FIXTURES;
const START = 1.3;
const END = 2.1;
/** One audio frame at most (AAC 1024, MP3 1152 samples at 44.1–48 kHz; lossless cuts are exact). */
const FRAME = 0.027;

describe("audio.trim cuts exactly", () => {
  test.each([
    [F.aacMp4, "m4a", "aac"],
    [F.flac, "flac", "flac"],
    [F.opus, "opus", "opus"],
    [F.vorbis, "ogg", "vorbis"],
    [F.alac, "m4a", "alac"],
    [F.mp3, "mp3", "mp3"],
    [F.mjpegPcmMov, "wav", "pcm_u8"],
    // AC-3 in M4A: its encoder's 256-sample delay hidden by the edit list (Matroska cannot state it).
    [F.ac3Side, "m4a", "ac3"],
  ])("%s → %s (%s)", { timeout: 180_000 }, async (source, format, codec) => {
    const { result, file } = await trim(source, { start: START, end: END });
    expect(result).toMatchObject({ format, start: START, copied: false });
    const probe = await ffprobe(file);
    expect(probe.streams.map((s) => s.codec_name)).toEqual([codec]);

    const shown = (await audioPresented(bins, file))!;
    expect(Math.abs(shown - (END - START))).toBeLessThanOrEqual(FRAME);
    // The file says how long it is (edit list, granule, STREAMINFO); ffmpeg 5.1 plays a last AAC frame whole.
    expect(Math.abs((result.duration ?? 0) - shown)).toBeLessThanOrEqual(FRAME);
    expect(result.end).toBeCloseTo(START + (result.duration ?? 0), 3);
    if (format === "m4a") {
      // A player that ignores the edit list hears the encoder's priming and padding at most, never cut audio.
      const raw = (await audioPresented(bins, file, { ignoreEditlist: true }))!;
      expect(raw - shown).toBeLessThanOrEqual(2 * FRAME);
    }
    // The tone grows louder with time: the first and last 50 ms are the source's at START and END.
    for (const [at, t] of [
      [0, START + 0.025],
      [(result.duration ?? 0) - 0.05, END - 0.025],
    ] as const) {
      const want = rampAmplitude(t) / Math.SQRT2;
      expect(Math.abs((await decodedRms(bins.ffmpeg, file, at, 0.05)) / want - 1)).toBeLessThan(0.1);
    }
  });

  test("a window that is the whole stream is copied", async () => {
    const { result, file } = await trim(F.mp3, { start: 0, end: 60 });
    expect(result).toMatchObject({ format: "mp3", start: 0, copied: true });
    const shown = (await audioPresented(bins, file))!;
    expect(Math.abs((result.duration ?? 0) - shown)).toBeLessThanOrEqual(0.002);
  });
});
