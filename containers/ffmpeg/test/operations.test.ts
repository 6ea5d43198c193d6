/**
 * Every operation on real media, checked with ffprobe and by decoding pixels: probe fields, cover sizes,
 * trim accuracy, audio formats and bitrates, watermarks that change their corner and nothing else.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { EngineResult } from "../src/protocol.ts";
import {
  ffprobe,
  fixturePath,
  frameRgb,
  media,
  regionDiff,
  regionMean,
  saveBody,
  startTestEngine,
  type TestEngine,
} from "./support/engine.ts";
import { AV_PROBE, FIXTURES } from "./support/media.ts";

let engine: TestEngine;
beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine.close());

const FRAME = 1 / 30;

async function produce(type: string, source: string, params: Record<string, unknown>, name: string) {
  const res = await engine.job(type, { source_url: media(source), params });
  if (res.status !== 200) throw new Error(`${type} answered ${res.status}: ${await res.text()}`);
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
  expect(res.headers.get("x-engine-timing")).toMatch(/^fetch=\d+;process=\d+$/);
  const contentType = res.headers.get("content-type");
  const file = await saveBody(res, name);
  const probe = await ffprobe(file);
  expect(Number(res.headers.get("content-length"))).toBe(result.size_bytes);
  return { result, file, probe, contentType };
}

describe("video.probe", () => {
  const probe = async (name: string) => {
    const res = await engine.job("video.probe", { source_url: media(name) });
    expect(res.status).toBe(200);
    return res.json();
  };

  test("H.264 MP4: exactly interface.md's fields", async () => {
    expect(await probe(FIXTURES.av)).toEqual(AV_PROBE);
  });

  test("fps is the reduced fraction for NTSC rates", async () => {
    expect(await probe(FIXTURES.ntsc)).toMatchObject({ fps: "30000/1001", width: 320, height: 180 });
  });

  test("VP9 WebM with alpha reports hasAlpha from the alpha_mode tag", async () => {
    expect(await probe(FIXTURES.alpha)).toEqual({
      codec: "vp9",
      durationSec: 2,
      fps: "25/1",
      hasAlpha: true,
      width: 320,
      height: 240,
    });
  });

  test("a file whose index is at the end probes the same", async () => {
    expect(await probe(FIXTURES.avTail)).toMatchObject({ codec: "h264", durationSec: 6, width: 640 });
  });
});

describe("video.extract-cover", () => {
  test.each([
    [{}, "jpeg", "mjpeg", 640, 360],
    [{ width: 320 }, "jpeg", "mjpeg", 320, 180],
    [{ height: 90, format: "png" }, "png", "png", 160, 90],
    [{ width: 300, height: 300, format: "webp" }, "webp", "webp", 300, 169],
    [{ width: 1280, height: 100, time: 2.5 }, "jpeg", "mjpeg", 178, 100],
  ])("%o → %s %ix%i", async (params, format, codec, width, height) => {
    const { result, probe, contentType } = await produce(
      "video.extract-cover",
      FIXTURES.av,
      params,
      `cover.${format}`,
    );
    expect(result).toMatchObject({ format, width, height });
    expect(contentType).toBe(`image/${format}`);
    expect(probe.streams[0]).toMatchObject({ codec_name: codec, width, height });
  });

  test("quality changes the JPEG", async () => {
    const low = await produce("video.extract-cover", FIXTURES.av, { quality: 10 }, "low.jpg");
    const high = await produce("video.extract-cover", FIXTURES.av, { quality: 95 }, "high.jpg");
    expect(low.result.size_bytes).toBeLessThan(high.result.size_bytes / 2);
  });

  test("the frame is the one at `time`", async () => {
    const { file } = await produce("video.extract-cover", FIXTURES.av, { time: 3, format: "png" }, "at3.png");
    const cover = await frameRgb(file, 0, 640, 360);
    const at3 = await frameRgb(fixturePath(FIXTURES.av), 3, 640, 360);
    const at1 = await frameRgb(fixturePath(FIXTURES.av), 1, 640, 360);
    const whole = { x: 0, y: 0, w: 640, h: 360 };
    expect(regionDiff(cover, at3, 640, whole)).toBeLessThan(2);
    expect(regionDiff(cover, at1, 640, whole)).toBeGreaterThan(5);
  });

  test("short videos default to the middle; a time past the last frame steps back", async () => {
    const middle = await produce("video.extract-cover", FIXTURES.short, {}, "short.jpg");
    expect(middle.result).toMatchObject({ width: 320, height: 180 });
    const end = await produce("video.extract-cover", FIXTURES.av, { time: 5.999 }, "end.jpg");
    expect(end.result.size_bytes).toBeGreaterThan(1000);
  });

  test("a PNG cover of a VP9 alpha video keeps the alpha channel", async () => {
    const { file, probe } = await produce(
      "video.extract-cover",
      FIXTURES.alpha,
      { format: "png", time: 0.5 },
      "alpha.png",
    );
    expect(probe.streams[0]).toMatchObject({ codec_name: "png", width: 320, height: 240 });
    const { execFile } = await import("node:child_process");
    const rgba = await new Promise<Buffer>((resolve, reject) =>
      execFile(
        "ffmpeg",
        ["-v", "error", "-i", file, "-f", "rawvideo", "-pix_fmt", "rgba", "pipe:1"],
        { encoding: "buffer", maxBuffer: 1 << 24 },
        (e, out) => (e ? reject(e) : resolve(out)),
      ),
    );
    const alphaAt = (x: number, y: number) => rgba[(y * 320 + x) * 4 + 3]!;
    expect(alphaAt(40, 120)).toBeGreaterThan(240);
    expect(alphaAt(280, 120)).toBeGreaterThan(40);
    expect(alphaAt(280, 120)).toBeLessThan(90);
  });
});

describe("video.trim", () => {
  test("accurate: frame-exact window, re-encoded H.264/AAC MP4", async () => {
    const { result, probe, file } = await produce(
      "video.trim",
      FIXTURES.av,
      { start: 1.5, end: 4.2 },
      "trim.mp4",
    );
    expect(result).toMatchObject({ format: "mp4", width: 640, height: 360, start: 1.5, end: 4.2 });
    expect(result.duration).toBeCloseTo(2.7, 1);
    const video = probe.streams.find((s) => s.codec_type === "video")!;
    const audio = probe.streams.find((s) => s.codec_type === "audio")!;
    expect(video.codec_name).toBe("h264");
    expect(audio.codec_name).toBe("aac");
    expect(Math.abs(Number(video.duration) - 2.7)).toBeLessThanOrEqual(FRAME + 1e-3);
    expect(Math.abs(Number(probe.format.duration) - 2.7)).toBeLessThanOrEqual(FRAME + 1e-3);
    // The first frame of the cut is the source's frame at 1.5 s.
    const first = await frameRgb(file, 0, 640, 360);
    const source = await frameRgb(fixturePath(FIXTURES.av), 1.5, 640, 360);
    expect(regionDiff(first, source, 640, { x: 0, y: 0, w: 640, h: 360 })).toBeLessThan(3);
  });

  test("accurate with duration instead of end", async () => {
    const { result, probe } = await produce(
      "video.trim",
      FIXTURES.av,
      { start: 0, duration: 1 },
      "trim-d.mp4",
    );
    expect(result).toMatchObject({ start: 0, end: 1 });
    const video = probe.streams.find((s) => s.codec_type === "video")!;
    expect(Math.abs(Number(video.duration) - 1)).toBeLessThanOrEqual(FRAME + 1e-3);
  });

  test("end past the media's end is clamped", async () => {
    const { result } = await produce("video.trim", FIXTURES.av, { start: 5, end: 60 }, "trim-end.mp4");
    expect(result.end).toBe(6);
    expect(result.duration).toBeCloseTo(1, 1);
  });

  test("fast: stream copy from the keyframe at or before start, which the result reports", async () => {
    const { result, probe } = await produce(
      "video.trim",
      FIXTURES.av,
      { start: 2.5, end: 4.5, mode: "fast" },
      "fast.mp4",
    );
    // Keyframes every 30 frames (1 s): the cut starts at 2 s.
    expect(result).toMatchObject({ format: "mp4", start: 2, width: 640, height: 360 });
    expect(result.duration).toBeGreaterThan(2.4);
    expect(result.duration).toBeLessThan(2.7);
    expect(result.end).toBeCloseTo(2 + (result.duration ?? 0), 2);
    expect(probe.streams.map((s) => s.codec_name).sort()).toEqual(["aac", "h264"]);
  });

  test("fast trim of a WebM stays WebM", async () => {
    const { result, probe } = await produce(
      "video.trim",
      FIXTURES.alpha,
      { start: 0.5, end: 1.5, mode: "fast" },
      "fast.webm",
    );
    expect(result.format).toBe("webm");
    expect(probe.streams[0]?.codec_name).toBe("vp9");
    expect(result.start).toBeLessThanOrEqual(0.5);
  });
});

describe("audio.trim", () => {
  test.each([
    [FIXTURES.mp3, { start: 1, duration: 2 }, "mp3", "mp3", 2],
    [FIXTURES.wav, { start: 0.5, end: 3 }, "wav", "pcm_s16le", 2.5],
    [FIXTURES.av, { start: 1, end: 2.5 }, "m4a", "aac", 1.5],
  ])("%s %o → %s (stream copy)", async (source, params, format, codec, seconds) => {
    const { result, probe } = await produce("audio.trim", source, params, `atrim.${format}`);
    expect(result.format).toBe(format);
    expect(probe.streams).toHaveLength(1);
    expect(probe.streams[0]?.codec_name).toBe(codec);
    expect(Math.abs(Number(probe.format.duration) - seconds)).toBeLessThan(0.06);
    expect(Math.abs((result.duration ?? 0) - seconds)).toBeLessThan(0.06);
    expect(result.start).toBe(params.start);
  });
});

describe("video.extract-audio", () => {
  const cases: [Record<string, unknown>, string, string, number | null][] = [
    [{}, "mp3", "mp3", 128_000],
    [{ format: "mp3", bitrate: "192k", sample_rate: 44100, channels: 1 }, "mp3", "mp3", 192_000],
    [{ format: "m4a", bitrate: "96k" }, "m4a", "aac", 96_000],
    [{ format: "opus", bitrate: "64k" }, "opus", "opus", 64_000],
    [{ format: "wav", channels: 1, sample_rate: 22050 }, "wav", "pcm_s16le", 22050 * 16],
    [{ format: "flac" }, "flac", "flac", null],
    [{ format: "original" }, "m4a", "aac", null],
  ];
  test.each(cases)("%o → %s", async (params, format, codec, bitrate) => {
    const { result, probe, contentType } = await produce(
      "video.extract-audio",
      FIXTURES.av,
      params,
      `audio.${format}`,
    );
    expect(result.format).toBe(format);
    expect(contentType).toMatch(/^audio\//);
    expect(probe.streams).toHaveLength(1);
    const stream = probe.streams[0]!;
    expect(stream.codec_name).toBe(codec);
    expect(Math.abs((result.duration ?? 0) - 6)).toBeLessThan(0.1);
    expect(Math.abs(Number(probe.format.duration) - (result.duration ?? 0))).toBeLessThan(0.05);
    if (params.sample_rate !== undefined) expect(Number(stream.sample_rate)).toBe(params.sample_rate);
    if (params.channels !== undefined) expect(stream.channels).toBe(params.channels);
    if (bitrate !== null) {
      // CBR MP3 and PCM are exact; AAC and Opus are average bitrates.
      const measured = Number(stream.bit_rate ?? probe.format.bit_rate);
      expect(Math.abs(measured - bitrate) / bitrate).toBeLessThan(
        format === "mp3" || format === "wav" ? 0.02 : 0.3,
      );
    }
  });
});

describe("video.watermark", () => {
  const W = 640;
  const H = 360;
  const whole = { x: 0, y: 0, w: W, h: H };
  /** Mean difference outside a rectangle (the rest of the frame, in four bands). */
  const outside = (a: Buffer, b: Buffer, r: { x: number; y: number; w: number; h: number }) => {
    const bands = [
      { x: 0, y: 0, w: W, h: r.y },
      { x: 0, y: r.y + r.h, w: W, h: H - r.y - r.h },
      { x: 0, y: r.y, w: r.x, h: r.h },
      { x: r.x + r.w, y: r.y, w: W - r.x - r.w, h: r.h },
    ].filter((band) => band.w > 0 && band.h > 0);
    return Math.max(...bands.map((band) => regionDiff(a, b, W, band)));
  };

  test("an image logo changes its corner and nothing else", async () => {
    const { result, probe, file } = await produce(
      "video.watermark",
      FIXTURES.av,
      { watermark_url: media(FIXTURES.logo), scale: 0.25, opacity: 1 },
      "wm.mp4",
    );
    expect(result).toMatchObject({ format: "mp4", width: W, height: H });
    expect(result.duration).toBeCloseTo(6, 1);
    expect(probe.streams.map((s) => s.codec_name).sort()).toEqual(["aac", "h264"]);
    const before = await frameRgb(fixturePath(FIXTURES.av), 2, W, H);
    const after = await frameRgb(file, 2, W, H);
    // 160x80 logo at bottom-right, margin 16: x 464..624, y 264..344; its left half is opaque red.
    const opaque = { x: 468, y: 268, w: 72, h: 72 };
    expect(regionMean(after, W, opaque, 0)).toBeGreaterThan(200);
    expect(regionMean(after, W, opaque, 1)).toBeLessThan(60);
    expect(regionDiff(before, after, W, opaque)).toBeGreaterThan(40);
    // The transparent half and everything outside the logo stay as they were (re-encoding noise only).
    expect(regionDiff(before, after, W, { x: 548, y: 268, w: 72, h: 72 })).toBeLessThan(4);
    expect(outside(before, after, { x: 460, y: 260, w: 168, h: 88 })).toBeLessThan(3);
    expect(regionDiff(before, after, W, whole)).toBeGreaterThan(
      regionDiff(before, after, W, { x: 0, y: 0, w: 400, h: 200 }),
    );
  });

  test("a text mark (the Worker's bitmap, support/text-mark.ts) at top-left, with opacity", async () => {
    const { file } = await produce(
      "video.watermark",
      FIXTURES.av,
      { text: "WATERMARK", position: "top-left", color: "#FFFF00", opacity: 0.9, font_size: 40 },
      "text.mp4",
    );
    const before = await frameRgb(fixturePath(FIXTURES.av), 2, W, H);
    const after = await frameRgb(file, 2, W, H);
    const mark = { x: 16, y: 16, w: 240, h: 40 };
    expect(regionDiff(before, after, W, mark)).toBeGreaterThan(15);
    expect(outside(before, after, { x: 8, y: 8, w: 280, h: 60 })).toBeLessThan(3);
  });

  test("start/end limit the mark to a window", async () => {
    const { file } = await produce(
      "video.watermark",
      FIXTURES.av,
      {
        watermark_url: media(FIXTURES.logo),
        scale: 0.25,
        opacity: 1,
        position: "top-left",
        start: 2.5,
        end: 4,
      },
      "window.mp4",
    );
    // The logo's opaque half covers x 16..96, y 16..96 while the window is open.
    const corner = { x: 20, y: 20, w: 72, h: 72 };
    const at = async (t: number) => {
      const before = await frameRgb(fixturePath(FIXTURES.av), t, W, H);
      const after = await frameRgb(file, t, W, H);
      return {
        diff: regionDiff(before, after, W, corner),
        red: regionMean(after, W, corner, 0),
        green: regionMean(after, W, corner, 1),
      };
    };
    expect((await at(1)).diff).toBeLessThan(4);
    const open = await at(3);
    expect(open.red).toBeGreaterThan(200);
    expect(open.green).toBeLessThan(60);
    expect((await at(5)).diff).toBeLessThan(4);
  });

  test("a VP9 alpha WebM becomes an H.264 MP4 with the mark", async () => {
    const { result, probe } = await produce(
      "video.watermark",
      FIXTURES.alpha,
      { text: "hi", position: "center" },
      "alpha-wm.mp4",
    );
    expect(result).toMatchObject({ format: "mp4", width: 320, height: 240 });
    expect(probe.streams[0]?.codec_name).toBe("h264");
  });
});
