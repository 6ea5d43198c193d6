import { describe, expect, it } from "vitest";
import { newAccount } from "../helpers/api";
import { download, media, operate, probe, stream } from "../helpers/media";

type Result = Record<string, unknown> & { id: string; type: string; url: string; expires_at: string };

async function ok(path: string, key: string, body: unknown) {
  const response = await operate(path, key, body);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  return JSON.parse(text) as Result;
}

describe("synchronous operations: produced files checked with ffprobe", () => {
  it("POST /v1/video/probe → interface.md's fields exactly", async () => {
    const { key } = await newAccount({ credits: 10 });
    const result = await ok("/v1/video/probe", key, { source_url: media("av.mp4") });
    expect(Object.keys(result).sort()).toEqual([
      "codec",
      "durationSec",
      "fps",
      "hasAlpha",
      "height",
      "id",
      "type",
      "width",
    ]);
    expect(result).toMatchObject({
      type: "video.probe",
      codec: "h264",
      fps: "30/1",
      hasAlpha: false,
      width: 640,
      height: 360,
    });
    expect(result.durationSec).toBeCloseTo(6, 1);
    const alpha = await ok("/v1/video/probe", key, { source_url: media("alpha.webm") });
    expect(alpha).toMatchObject({ codec: "vp9", hasAlpha: true, width: 320, height: 240 });
    const ntsc = await ok("/v1/video/probe", key, { source_url: media("ntsc.mp4") });
    expect(ntsc.fps).toBe("30000/1001");
  });

  it("POST /v1/video/extract-audio → mp3 at the asked bitrate", async () => {
    const { key } = await newAccount({ credits: 10 });
    const result = await ok("/v1/video/extract-audio", key, {
      source_url: media("av.mp4"),
      params: { bitrate: "96k" },
    });
    expect(result).toMatchObject({ type: "video.extract-audio", format: "mp3" });
    expect(result.duration).toBeCloseTo(6, 0);
    expect(Date.parse(result.expires_at)).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    const file = await download(result.url);
    expect(file.type).toBe("audio/mpeg");
    const probed = await probe(file.bytes);
    expect(stream(probed, "audio")?.codec_name).toBe("mp3");
    expect(Number(stream(probed, "audio")?.bit_rate)).toBeCloseTo(96_000, -4);
  });

  it("POST /v1/video/trim → accurate duration, same size", async () => {
    const { key } = await newAccount({ credits: 10 });
    const result = await ok("/v1/video/trim", key, {
      source_url: media("av.mp4"),
      params: { start: 1, duration: 2 },
    });
    expect(result).toMatchObject({ type: "video.trim", format: "mp4", width: 640, height: 360, start: 1 });
    const probed = await probe((await download(result.url)).bytes);
    expect(stream(probed, "video")).toMatchObject({ codec_name: "h264", width: 640, height: 360 });
    expect(Math.abs(Number(probed.format.duration) - 2)).toBeLessThanOrEqual(1 / 30 + 0.03);
  });

  it("POST /v1/audio/trim → the asked window", async () => {
    const { key } = await newAccount({ credits: 10 });
    const result = await ok("/v1/audio/trim", key, {
      source_url: media("audio.mp3"),
      params: { start: 0.5, end: 2 },
    });
    expect(result).toMatchObject({ type: "audio.trim" });
    const probed = await probe((await download(result.url)).bytes);
    expect(Number(probed.format.duration)).toBeCloseTo(1.5, 0);
  });

  it("POST /v1/video/extract-cover → a PNG of the asked width", async () => {
    const { key } = await newAccount({ credits: 10 });
    const result = await ok("/v1/video/extract-cover", key, {
      source_url: media("av.mp4"),
      params: { time: 1, format: "png", width: 320 },
    });
    expect(result).toMatchObject({ type: "video.extract-cover", format: "png", width: 320, height: 180 });
    const file = await download(result.url);
    expect(file.type).toBe("image/png");
    expect(stream(await probe(file.bytes), "video")).toMatchObject({
      codec_name: "png",
      width: 320,
      height: 180,
    });
  });

  it("POST /v1/video/watermark → an H.264/AAC MP4 of the same size", async () => {
    const { key } = await newAccount({ credits: 10 });
    const result = await ok("/v1/video/watermark", key, {
      source_url: media("short.mp4"),
      params: { text: "p6", position: "top-left" },
    });
    expect(result).toMatchObject({ type: "video.watermark", format: "mp4" });
    const probed = await probe((await download(result.url)).bytes);
    expect(stream(probed, "video")?.codec_name).toBe("h264");
    expect(stream(probed, "video")?.width).toBe(result.width);
  });

  it("POST /v1/image/watermark → WebP with the base's dimensions", async () => {
    const { key } = await newAccount({ credits: 10 });
    const result = await ok("/v1/image/watermark", key, {
      source_url: media("photo.jpg"),
      params: { watermark_url: media("logo.png"), format: "webp", position: "center" },
    });
    expect(result).toMatchObject({ type: "image.watermark", format: "webp" });
    const file = await download(result.url);
    expect(file.type).toBe("image/webp");
    expect(stream(await probe(file.bytes), "video")).toMatchObject({
      width: result.width,
      height: result.height,
    });
  });

  it("text mark on an image, same format", async () => {
    const { key } = await newAccount({ credits: 10 });
    const result = await ok("/v1/image/watermark", key, {
      source_url: media("photo.jpg"),
      params: { text: "hello" },
    });
    expect(result).toMatchObject({ format: "jpeg" });
    expect((await download(result.url)).type).toBe("image/jpeg");
  });
});
