/**
 * Every bench entry point runs (issue 39): each is started as its npm script starts it, in its shortest mode
 * (BENCH_SMOKE=1, bench/lib/smoke.ts: tiny inputs, one iteration, seconds of load), and must exit 0 having
 * printed its lines. Their figures mean nothing here; a bench that no longer runs fails `npm run
 * test:bench-smoke` (vitest.bench-smoke.config.ts), which `.ci/run` runs: not `npm test`, whose feedback loop it
 * lengthened by ~4.5 min.
 * The benches that start the service copy a seeded state (test/support/seeded-state.ts), as the browser tests'
 * services do, so `npm run dev` finds the fonts and migrations in place.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { seededStateTemplate } from "../support/seeded-state.ts";

const root = path.resolve(import.meta.dirname, "../..");

type Entry = {
  script: string;
  args?: string[];
  /** Whether it starts the service (`npm run dev`), which then starts from the seeded state. */
  service?: boolean;
  /** Lines its output must have. */
  lines: RegExp[];
  timeoutMs: number;
};

const ENTRIES: Record<string, Entry> = {
  // npm run bench: every group, in one run.
  bench: {
    script: "bench/run.ts",
    service: true,
    lines: [
      /^auth-overhead: [\d.]+x \(/m,
      /^auth-overhead-running-task: [\d.]+x \([^)]*\)$/m,
      /^signin-hash: [\d.-]+ ms p50 CPU/m,
      /^image-watermark-vs-sharp: [\d.]+x .*fetch \d+, decode \d+, composite \d+, encode \d+, store \d+/m,
      /^probe-overhead: -?\d+ ms p50/m,
      /^webhook-first-attempt: \d+ ms p50 \(1\/1 delivered\)/m,
      /^task-image-watermark: \d+ ms p50/m,
      /^text-watermark \(48 px/m,
      /^upload-throughput \(2 MiB in 1 MiB requests/m,
      /^bench smoke: done$/m,
    ],
    // Four service starts (bench/run.ts's groups), each up to 300 s on a loaded machine.
    timeoutMs: 900_000,
  },
  "bench:engine": {
    script: "bench/engine.ts",
    lines: [
      /^engine-video\.probe: [\d.]+x/m,
      /^engine-video\.trim-fast: [\d.]+x/m,
      /^engine-video\.watermark: [\d.]+x/m,
      /^floor-video\.watermark: /m,
      /^engine-rss: idle \d+ MiB/m,
    ],
    // About 30 process starts (engine, direct, floor, local file per operation): 4 min at load 30 here.
    timeoutMs: 600_000,
  },
  "bench:engine-cpu": {
    script: "bench/engine-cpu.ts",
    lines: [/video\.probe +engine Node +\d+ ms/, /video\.trim +engine Node +\d+ ms/],
    timeoutMs: 180_000,
  },
  "bench:load": {
    script: "bench/load.ts",
    service: true,
    lines: [
      /^probe p99 load\/idle: /m,
      /^well-behaved sync calls failed: \d+/m,
      /^peak RSS: workerd \d+ MiB/m,
    ],
    timeoutMs: 600_000,
  },
  "bench:load-model": {
    script: "bench/load-model.ts",
    lines: [/^model: 2 slots/m, /^tasks alone/m],
    timeoutMs: 120_000,
  },
  "bench/load-nice.ts": {
    script: "bench/load-nice.ts",
    lines: [/^encodes at nice 10: probe p50 \d+ ms/m],
    timeoutMs: 120_000,
  },
  "bench/image-memory.ts": {
    script: "bench/image-memory.ts",
    lines: [/^\| 1080p JPEG \+ PNG logo → WebP \| \d+ ms \|/m],
    timeoutMs: 180_000,
  },
  "bench/text-watermark.ts": {
    script: "bench/text-watermark.ts",
    lines: [/^text-watermark \(48 px, stroke; wall in wrangler dev\): Latin cold \d+ ms/m],
    timeoutMs: 300_000,
  },
  "bench/upload-throughput.ts": {
    script: "bench/upload-throughput.ts",
    service: true,
    lines: [/^upload-throughput \(2 MiB in 1 MiB requests, median of 1\)/m],
    timeoutMs: 600_000,
  },
};

/** Runs an entry point as its npm script does (scripts/node22.mjs), with its ports from `port` on. */
function run(entry: Entry, port: number, template: string | undefined) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      [path.join(root, "scripts/node22.mjs"), entry.script, ...(entry.args ?? [])],
      {
        cwd: root,
        env: {
          ...process.env,
          BENCH_SMOKE: "1",
          BENCH_PORT: String(port),
          ...(template ? { BENCH_STATE_TEMPLATE: template } : {}),
        },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    const timer = setTimeout(() => {
      output += `\n(killed after ${entry.timeoutMs} ms)`;
      process.kill(-child.pid!, "SIGKILL");
    }, entry.timeoutMs - 5_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** A range of ports per entry, away from `npm run dev`'s 8787 and from other runs of this file. */
const portBase = 41_000 + Math.floor(Math.random() * 900) * 20;

describe("every bench entry point runs in its shortest mode (BENCH_SMOKE=1)", () => {
  test.each(Object.entries(ENTRIES).map(([name, entry], i) => ({ name, entry, port: portBase + i * 20 })))(
    "$name",
    async ({ entry, port }) => {
      const template = entry.service ? await seededStateTemplate() : undefined;
      const { code, output } = await run(entry, port, template);
      expect(code, output).toBe(0);
      for (const line of entry.lines) expect(output, `${line} in:\n${output}`).toMatch(line);
      expect(output).not.toMatch(/invalid: the running task/);
    },
    // Per entry (test.each takes one timeout): the longest, `bench`'s (its own limit kills it 5 s before).
    900_000,
  );
});
