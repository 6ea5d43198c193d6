import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { emojiPackFile } from "../scripts/lib/emoji-pack.ts";
import { startGroup, stopGroup, waitForHttp } from "../scripts/lib/processes.ts";
import { REMOTE_FONT_FILES } from "../src/text/remote-fonts.ts";
import { p50 } from "./lib/media.ts";
import { BENCH_PORT, sized } from "./lib/smoke.ts";

const RUNS = sized(9, 1);
const WARM_UP = sized(5, 0);
const LATIN = "© 2026 Example Studio";
const CJK = "水印测试 © 2026";
const EMOJI = "Hi 😀 👍🏽 🇫🇷 👨‍👩‍👧‍👦";

/**
 * text-watermark: renderTextMark (src/text/mark.ts) in workerd through `wrangler dev` (bench/text/worker.ts),
 * wall time per request seen from Node. Cold = the isolate's first mark (resvg's WASM instantiated, the
 * bundled fonts' cmaps read); CJK first = its first CJK mark (19.5 MB read from the local R2, parsed); emoji
 * first = its first emoji mark (the pack's 290 KB index and four pictures read by range from the local R2);
 * warm = p50 of 9 runs after 5 untimed ones. The request's own cost (GET /noop) is the baseline.
 */
export async function textWatermark(port = BENCH_PORT + 2) {
  const root = path.resolve(import.meta.dirname, "..");
  const state = mkdtempSync(path.join(os.tmpdir(), "p6-bench-text-"));
  const wrangler = path.join(root, "node_modules/.bin/wrangler");
  const child = startGroup(
    "text-bench",
    wrangler,
    [
      "dev",
      "--config",
      "bench/text/wrangler.toml",
      "--port",
      String(port),
      "--ip",
      "127.0.0.1",
      "--persist-to",
      state,
    ],
    { cwd: root, env: { WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" }, quiet: true },
  );
  const base = `http://127.0.0.1:${port}`;
  const timed = async (url: string, init?: RequestInit) => {
    const started = performance.now();
    const response = await fetch(url, init);
    const body = await response.text();
    if (!response.ok) throw new Error(`${url}: ${response.status} ${body}`);
    return performance.now() - started;
  };
  try {
    // A service start on a loaded machine (two test suites at once: over 120 s once).
    await waitForHttp(`${base}/noop`, 300_000);
    const mark = (text: string) => timed(`${base}/mark?${new URLSearchParams({ text })}`);
    const latinCold = await mark(LATIN);
    // V8 tiers the WASM up in the background: a few marks before the warm ones are timed.
    for (let i = 0; i < WARM_UP; i++) await mark(LATIN);
    const latinWarm: number[] = [];
    for (let i = 0; i < RUNS; i++) latinWarm.push(await mark(LATIN));
    const noop: number[] = [];
    for (let i = 0; i < RUNS; i++) noop.push(await timed(`${base}/noop`));
    let emojiLine = "emoji skipped (fonts-noto-color-emoji not installed)";
    const pack = emojiPackFile();
    if (pack) {
      await timed(`${base}/fonts/${pack.key}`, { method: "PUT", body: readFileSync(pack.path) });
      const emojiFirst = await mark(EMOJI);
      for (let i = 0; i < WARM_UP; i++) await mark(EMOJI);
      const emojiWarm: number[] = [];
      for (let i = 0; i < RUNS; i++) emojiWarm.push(await mark(EMOJI));
      emojiLine = `emoji first ${emojiFirst.toFixed(0)} ms, warm p50 ${p50(emojiWarm).toFixed(0)} ms`;
    }
    let cjkLine = "CJK skipped (fonts-noto-cjk not installed)";
    const font = REMOTE_FONT_FILES[0];
    if (existsSync(font.path)) {
      await timed(`${base}/fonts/${font.key}`, { method: "PUT", body: readFileSync(font.path) });
      const cjkFirst = await mark(CJK);
      for (let i = 0; i < WARM_UP; i++) await mark(CJK);
      const cjkWarm: number[] = [];
      for (let i = 0; i < RUNS; i++) cjkWarm.push(await mark(CJK));
      cjkLine = `CJK first ${cjkFirst.toFixed(0)} ms, warm p50 ${p50(cjkWarm).toFixed(0)} ms`;
    }
    console.log(
      `text-watermark (48 px, stroke; wall in wrangler dev): Latin cold ${latinCold.toFixed(0)} ms, warm p50 ` +
        `${p50(latinWarm).toFixed(0)} ms; ${emojiLine}; ${cjkLine}; request alone p50 ${p50(noop).toFixed(1)} ms`,
    );
  } finally {
    stopGroup(child);
    rmSync(state, { recursive: true, force: true });
  }
}

if (import.meta.main) await textWatermark();
