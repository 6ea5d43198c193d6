import { execFileSync } from "node:child_process";
import sharp from "sharp";
import { benchMedia, p50, serveMedia } from "./lib/media.ts";
import { type Service, unlimitedKey } from "./lib/service.ts";

const RUNS = 9;

async function timed(work: () => Promise<unknown>) {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/**
 * image-watermark-vs-sharp: 1920×1080 JPEG + PNG logo → WebP through the local API (fetch through the engine,
 * decode, composite, encode, store) against the same composite with sharp in Node. Goal ≤ 2.0.
 * probe-overhead: API probe minus a direct ffprobe of the same file, p50. Goal ≤ 50 ms.
 */
export async function operationBenchmarks(service: Service) {
  const file = benchMedia();
  const media = await serveMedia();
  const key = await unlimitedKey(service);
  let n = 0;
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${service.base}${path}`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${key}`,
        "Content-Type": "application/json",
        "Idempotency-Key": `bench-${Date.now()}-${++n}`,
      },
      body: JSON.stringify(body),
    });
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  try {
    const watermark = () =>
      post("/v1/image/watermark", {
        source_url: media.url("photo-1080.jpg"),
        params: {
          watermark_url: media.url("logo.png"),
          format: "webp",
          scale: 0.2,
          opacity: 0.5,
          quality: 85,
        },
      });
    const withSharp = async () => {
      const logo = await sharp(file("logo.png"))
        .resize(384)
        .ensureAlpha()
        .linear([1, 1, 1, 0.5], [0, 0, 0, 0])
        .png()
        .toBuffer();
      await sharp(file("photo-1080.jpg"))
        .composite([{ input: logo, gravity: "southeast" }])
        .webp({ quality: 85 })
        .toBuffer();
    };
    await watermark();
    await withSharp();
    const api: number[] = [];
    const local: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      api.push(await timed(watermark));
      local.push(await timed(withSharp));
    }
    console.log(
      `image-watermark-vs-sharp: ${(p50(api) / p50(local)).toFixed(2)}x (${p50(api).toFixed(0)} ms vs ${p50(local).toFixed(0)} ms)`,
    );

    const probe = () => post("/v1/video/probe", { source_url: media.url("clip.mp4") });
    const direct = async () =>
      execFileSync(process.env.FFPROBE_PATH ?? "ffprobe", [
        "-v",
        "error",
        "-show_streams",
        "-show_format",
        "-of",
        "json",
        file("clip.mp4"),
      ]);
    await probe();
    const viaApi: number[] = [];
    const ffprobe: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      viaApi.push(await timed(probe));
      ffprobe.push(await timed(direct));
    }
    console.log(
      `probe-overhead: ${(p50(viaApi) - p50(ffprobe)).toFixed(0)} ms p50 (${p50(viaApi).toFixed(0)} ms vs ${p50(ffprobe).toFixed(0)} ms)`,
    );
  } finally {
    media.close();
  }
}
