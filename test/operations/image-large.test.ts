import { describe, expect, it } from "vitest";
import { IN_WORKER_MAX_PIXELS } from "../../src/operations/image-watermark";
import { newAccount } from "../helpers/api";
import { download, media, operate, probe, stream } from "../helpers/media";

type Result = Record<string, unknown> & { id: string; type: string; url: string; size_bytes: number };

async function ok(key: string, body: unknown) {
  const response = await operate("/v1/image/watermark", key, body);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text) as Result;
}

/** photo-3mp.jpg is 2048×1536 (3.1 MP): more than the Worker decodes itself, so the engine watermarks it. */
describe("image.watermark above the in-Worker limit runs on the media engine", () => {
  it("the fixture is above the in-Worker limit", () => {
    expect(2048 * 1536).toBeGreaterThan(IN_WORKER_MAX_PIXELS);
  });

  it("a logo on a 3 MP JPEG, as PNG: the base's dimensions, the asked format", async () => {
    const { key } = await newAccount({ credits: 10 });
    const result = await ok(key, {
      source_url: media("photo-3mp.jpg"),
      params: { watermark_url: media("logo.png"), format: "png", position: "top-left" },
    });
    expect(result).toMatchObject({ type: "image.watermark", format: "png", width: 2048, height: 1536 });
    expect(Object.keys(result).sort()).toEqual(
      ["expires_at", "format", "height", "id", "size_bytes", "type", "url", "width"].sort(),
    );
    expect(result.url).toMatch(/\/watermark\.png\?/);
    const file = await download(result.url);
    expect(file.type).toBe("image/png");
    expect(file.bytes.byteLength).toBe(result.size_bytes);
    expect(stream(await probe(file.bytes), "video")).toMatchObject({
      codec_name: "png",
      width: 2048,
      height: 1536,
    });
  });

  it("a text mark, format same: a JPEG again", async () => {
    const { key } = await newAccount({ credits: 10 });
    const result = await ok(key, { source_url: media("photo-3mp.jpg"), params: { text: "© large" } });
    expect(result).toMatchObject({ format: "jpeg", width: 2048, height: 1536 });
    const file = await download(result.url);
    expect(file.type).toBe("image/jpeg");
    expect(stream(await probe(file.bytes), "video")).toMatchObject({
      codec_name: "mjpeg",
      width: 2048,
      height: 1536,
    });
  });

  it("a logo that is not an image is refused as it is for small images", async () => {
    const { key } = await newAccount({ credits: 10 });
    const response = await operate("/v1/image/watermark", key, {
      source_url: media("photo-3mp.jpg"),
      params: { watermark_url: media("text.mp4"), format: "webp" },
    });
    expect(response.status).toBe(415);
    expect(((await response.json()) as { code: string }).code).toBe("CONTENT_TYPE_UNSUPPORTED");
  });
});

describe("a logo above the in-Worker limit sends the job to the media engine", () => {
  it("a 3 MP logo on a small base: the base's dimensions", async () => {
    const { key } = await newAccount({ credits: 10 });
    const result = await ok(key, {
      source_url: media("logo.png"),
      params: { watermark_url: media("photo-3mp.jpg"), format: "png", scale: 0.5 },
    });
    const file = await download(result.url);
    const probed = stream(await probe(file.bytes), "video");
    expect(probed).toMatchObject({ codec_name: "png", width: result.width, height: result.height });
  });
});
