/**
 * Peak memory and time of image.watermark, running the Worker's own code (src/images) in Node: jSquash and the
 * TypeScript PNG codec behave the same there. Each case runs in a fresh child process and reports its peak RSS
 * (which includes WASM memory) above the process's RSS just before the call.
 *
 *   node bench/image-memory.ts            # all cases
 *   node bench/image-memory.ts 1080p      # only cases whose name contains "1080p"
 *   BENCH_SMOKE=1 node bench/image-memory.ts   # the 1080p JPEG + logo case alone, only its fixtures made
 *
 * Node's own baseline (~50 MB) is subtracted; the Worker's bundle and runtime come on top of "peak − base".
 * The last column, V8's heap plus external memory (ArrayBuffers, WASM memories) before and after the call, is
 * nearer to what a Worker's memory limit counts than RSS, which also holds compiled code.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { registerHooks } from "node:module";
import { join } from "node:path";
import { recipeDir, writeFileAtomic } from "../containers/ffmpeg/test/support/fixture-files.ts";
import { SMOKE } from "./lib/smoke.ts";

// Load src/images as wrangler bundles it: extensionless imports, *.wasm as a compiled module, *.ttf as bytes.
registerHooks({
  resolve(specifier, context, next) {
    const bare = specifier.replace(/\?module$/, "");
    try {
      return next(bare, context);
    } catch (error) {
      if (bare.startsWith(".")) return next(`${bare}.ts`, context);
      throw error;
    }
  },
  load(url, context, next) {
    const read = `import { readFileSync } from "node:fs"; const b = readFileSync(new URL(${JSON.stringify(url)}));`;
    if (url.endsWith(".wasm"))
      return {
        format: "module",
        shortCircuit: true,
        source: `${read} export default new WebAssembly.Module(b);`,
      };
    if (url.endsWith(".ttf"))
      return {
        format: "module",
        shortCircuit: true,
        source: `${read} export default b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);`,
      };
    return next(url, context);
  },
});

type Case = { name: string; base: string; logo?: string; params: Record<string, unknown> };

// Keyed by this file and rewritten whole on every run (fixture-files.ts): two runs at once never read each
// other's half-written inputs.
const DIR = recipeDir("p6-image-memory", [import.meta.filename]);
const LOGO_URL = "https://example.com/logo.png";
const TEXT = "© Example 2026";
const LOGO = { watermark_url: LOGO_URL };
const CASES: Case[] = [
  {
    name: "16.8MP JPEG + PNG logo → WebP",
    base: "16mp.jpg",
    logo: "logo.png",
    params: { ...LOGO, format: "webp" },
  },
  { name: "16.8MP JPEG + text → JPEG", base: "16mp.jpg", params: { text: TEXT } },
  { name: "16.8MP PNG + PNG logo → PNG", base: "16mp.png", logo: "logo.png", params: LOGO },
  { name: "16.8MP PNG + text → WebP", base: "16mp.png", params: { text: TEXT, format: "webp" } },
  {
    name: "8.3MP JPEG + PNG logo → WebP",
    base: "8mp.jpg",
    logo: "logo.png",
    params: { ...LOGO, format: "webp" },
  },
  { name: "8.3MP JPEG + text → JPEG", base: "8mp.jpg", params: { text: TEXT } },
  {
    name: "4.1MP JPEG + PNG logo → WebP",
    base: "4mp.jpg",
    logo: "logo.png",
    params: { ...LOGO, format: "webp" },
  },
  { name: "4.1MP JPEG + text → JPEG", base: "4mp.jpg", params: { text: TEXT } },
  {
    name: "1080p JPEG + PNG logo → WebP",
    base: "1080p.jpg",
    logo: "logo.png",
    params: { ...LOGO, format: "webp" },
  },
  { name: "1080p JPEG + text → JPEG", base: "1080p.jpg", params: { text: TEXT } },
  { name: "1080p PNG + PNG logo → PNG", base: "1080p.png", logo: "logo.png", params: LOGO },
];

const MB = 1024 * 1024;
const mb = (bytes: number) => (bytes / MB).toFixed(0);

/** A photo-like test image: smooth gradients plus fine texture, so codecs have real work to do. */
function photo(width: number, height: number) {
  const data = new Uint8ClampedArray(width * height * 4);
  let seed = 1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const noise = (seed >> 16) & 15;
      const i = (y * width + x) * 4;
      data[i] = (255 * x) / width + noise;
      data[i + 1] = (255 * y) / height + noise;
      data[i + 2] = 128 + 64 * Math.sin(x / 50) * Math.cos(y / 70);
      data[i + 3] = 255;
    }
  }
  return { data, width, height };
}

async function makeFixtures() {
  const { encodeImage } = await import("../src/images/codecs.ts");
  const sizes = [
    ["16mp", 5000, 3360],
    ["8mp", 3840, 2160],
    ["4mp", 2560, 1600],
    ["1080p", 1920, 1080],
  ] as const;
  for (const [name, width, height] of SMOKE ? sizes.filter(([n]) => n === "1080p") : sizes) {
    const image = photo(width, height);
    await writeFileAtomic(join(DIR, `${name}.jpg`), await encodeImage(image, "jpeg", 90));
    await writeFileAtomic(join(DIR, `${name}.png`), await encodeImage(image, "png", 0));
  }
  const logo = photo(600, 300);
  for (let i = 3; i < logo.data.length; i += 8) logo.data[i] = 0; // every other pixel transparent
  await writeFileAtomic(join(DIR, "logo.png"), await encodeImage(logo, "png", 0));
}

async function runCase(c: Case) {
  const { watermarkImage } = await import("../src/images/watermark.ts");
  const base = new Uint8Array(readFileSync(join(DIR, c.base)));
  const logo = c.logo ? new Uint8Array(readFileSync(join(DIR, c.logo))) : undefined;
  (globalThis as { gc?: () => void }).gc?.();
  const heapBefore = process.memoryUsage();
  const before = heapBefore.rss;
  const start = performance.now();
  const result = await watermarkImage(base, c.params, logo);
  const ms = performance.now() - start;
  const peak = process.resourceUsage().maxRSS * 1024;
  const after = process.memoryUsage();
  return {
    ms: Math.round(ms),
    inputBytes: base.length,
    outputBytes: result.bytes.length,
    size: `${result.width}×${result.height}`,
    rssBefore: before,
    rssPeak: peak,
    rssAfter: after.rss,
    arrayBuffersAfter: after.arrayBuffers,
    externalAfter: after.external,
    heapBefore: heapBefore.heapUsed + heapBefore.external,
    heapAfter: after.heapUsed + after.external,
  };
}

async function main() {
  const index = process.argv.indexOf("--case");
  if (index > 0) {
    const c = CASES.find((x) => x.name === process.argv[index + 1])!;
    process.stdout.write(JSON.stringify(await runCase(c)));
    return;
  }
  const filter = process.argv[2] ?? (SMOKE ? "1080p JPEG + PNG logo" : "");
  await makeFixtures();
  console.log(
    `fixtures in ${DIR}; sizes: ${["16mp.jpg", "16mp.png", "1080p.jpg", "1080p.png", "logo.png"]
      .filter((f) => existsSync(join(DIR, f)))
      .map((f) => `${f} ${mb(readFileSync(join(DIR, f)).length)} MB`)
      .join(", ")}`,
  );
  console.log(
    "| case | time | RSS before | peak RSS | peak − before | RSS after | JS heap + external: before → after |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const c of CASES.filter((x) => x.name.includes(filter))) {
    const child = spawnSync(process.execPath, ["--expose-gc", import.meta.filename, "--case", c.name], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    if (child.status !== 0) throw new Error(`${c.name} failed`);
    const r = JSON.parse(child.stdout);
    console.log(
      `| ${c.name} | ${r.ms} ms | ${mb(r.rssBefore)} MB | ${mb(r.rssPeak)} MB | **${mb(r.rssPeak - r.rssBefore)} MB** | ${mb(r.rssAfter)} MB | ${mb(r.heapBefore)} → ${mb(r.heapAfter)} MB |`,
    );
  }
}

await main();
