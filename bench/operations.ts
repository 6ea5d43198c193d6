import { execFileSync } from "node:child_process";
import sharp from "sharp";
import { benchMedia, p50, serveMedia } from "./lib/media.ts";
import { type Service, unlimitedKey } from "./lib/service.ts";
import { sized } from "./lib/smoke.ts";

const RUNS = sized(9, 1);

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

/** A POST to a synchronous route with a fresh Idempotency-Key and X-Debug-Timing; its Server-Timing phases. */
async function poster(service: Service) {
  const key = await unlimitedKey(service);
  let n = 0;
  return async (path: string, body: unknown) => {
    const response = await fetch(`${service.base}${path}`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${key}`,
        "Content-Type": "application/json",
        "Idempotency-Key": `bench-${Date.now()}-${++n}`,
        "X-Debug-Timing": "1",
      },
      body: JSON.stringify(body),
    });
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
    return serverTiming(response.headers.get("server-timing") ?? "");
  };
}

/** `fetch;dur=12.3, process;dur=40` → { fetch: 12.3, process: 40 }. */
function serverTiming(header: string): Record<string, number> {
  const phases: Record<string, number> = {};
  for (const entry of header.split(",")) {
    const [name, ...fields] = entry.trim().split(";");
    const dur = fields.map((f) => /^dur=([\d.]+)$/.exec(f.trim())?.[1]).find(Boolean);
    if (name && dur !== undefined) phases[name] = Number(dur);
  }
  return phases;
}

/**
 * The split of the API's time, p50 of each phase over the runs, as the Worker reported it (Server-Timing):
 * fetch (both images, through the engine's guarded fetcher), decode, composite, encode (inside the Worker's
 * process phase, src/images/watermark.ts), store (R2 and the file row), and the rest of the round trip
 * (authentication, idempotency claim and balance, charge, HTTP) as what the client saw less those phases.
 */
function split(wall: number[], phases: Record<string, number>[]) {
  const of = (name: string) => p50(phases.map((p) => p[name] ?? 0));
  const named = ["fetch", "decode", "composite", "encode", "store"] as const;
  const parts = named.map((name) => [name, of(name)] as const);
  const inProcess = of("process") - of("decode") - of("composite") - of("encode");
  const rest = p50(wall) - parts.reduce((sum, [, ms]) => sum + ms, 0) - Math.max(0, inProcess);
  return [
    ...parts.map(([name, ms]) => `${name} ${ms.toFixed(0)}`),
    `other processing ${Math.max(0, inProcess).toFixed(0)}`,
    `the rest ${rest.toFixed(0)} ms`,
  ].join(", ");
}

/**
 * image-watermark-vs-sharp: 1920×1080 JPEG + PNG logo → WebP through the local API (fetch through the engine,
 * decode, composite, encode, store) against the same composite with sharp in Node, alternating, p50 of 9.
 * Goal ≤ 1.2×. The API's time is split by its Server-Timing phases (see `split`).
 */
export async function imageWatermarkVsSharp(service: Service) {
  const file = benchMedia();
  const media = await serveMedia();
  const post = await poster(service);
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
    // Warm-up: the isolate's codecs instantiated and tiered up, sharp's libvips loaded.
    for (let i = 0; i < sized(3, 1); i++) {
      await watermark();
      await withSharp();
    }
    const api: number[] = [];
    const phases: Record<string, number>[] = [];
    const local: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const call = await timed(watermark);
      api.push(call.ms);
      phases.push(call.value);
      local.push((await timed(withSharp)).ms);
    }
    console.log(
      `image-watermark-vs-sharp: ${(p50(api) / p50(local)).toFixed(2)}x (${p50(api).toFixed(0)} ms vs ${p50(local).toFixed(0)} ms; API split p50: ${split(api, phases)})`,
    );
  } finally {
    media.close();
  }
}

/** probe-overhead: API probe minus a direct ffprobe of the same file, p50 of 9. Goal ≤ 0 ms. */
export async function probeOverhead(service: Service) {
  const file = benchMedia();
  const media = await serveMedia();
  const post = await poster(service);
  try {
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
      viaApi.push((await timed(probe)).ms);
      ffprobe.push((await timed(direct)).ms);
    }
    console.log(
      `probe-overhead: ${(p50(viaApi) - p50(ffprobe)).toFixed(0)} ms p50 (${p50(viaApi).toFixed(0)} ms vs ${p50(ffprobe).toFixed(0)} ms)`,
    );
  } finally {
    media.close();
  }
}
