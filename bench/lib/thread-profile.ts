/**
 * BENCH_PERF=1 (bench:load): where the Worker's workerd thread spends its CPU, by script, from `perf` samples
 * (Debian's linux-perf) and V8's perf maps. In `wrangler dev` that one thread runs the Worker and also miniflare's
 * local D1, R2 and queues, its entry worker, and wrangler's local trace collector, which the isolate profiler
 * (BENCH_PROFILE, the Worker's own isolate only) does not see. perf and the perf maps slow the service down:
 * read the shares of a profiled run, not its latencies.
 */
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";

/** The service's environment for a profiled run: V8 writes /tmp/perf-<pid>.map for perf to name JS frames. */
export const PERF_SERVICE_ENV = {
  MINIFLARE_WORKERD_V8_FLAGS: "--perf-basic-prof --interpreted-frames-native-stack",
};

export type ThreadProfile = {
  seconds: number;
  /** The busiest workerd thread's CPU time over the recorded wall time. */
  cpuShare: number;
  parts: { name: string; share: number }[];
};

/** Who a sample's CPU belongs to, from its stack (leaf first): the outermost JS frame's script decides. */
export function ownerOf(frames: string[]): string {
  let outer: string | undefined;
  for (const frame of frames) {
    const script = /JS:\S*\s+(\S+?):\d+:\d+/.exec(frame)?.[1];
    if (script) outer = script;
  }
  if (outer === undefined)
    return frames.some((f) => /tracing::|TailStream|TailEvent/.test(f))
      ? "wrangler's local trace collector"
      : "runtime outside any script (HTTP, RPC, I/O, GC)";
  if (outer === "index.js")
    return frames[0]?.includes("JS:wasm-function")
      ? "the Worker: WASM (image codecs)"
      : "the Worker: JS and the runtime it calls";
  if (outer === "collector.worker.js") return "wrangler's local trace collector";
  if (outer === "database.worker.js" || outer.startsWith("cloudflare-internal:d1"))
    return "local D1 (miniflare)";
  if (outer === "bucket.worker.js") return "local R2 (miniflare)";
  return "other miniflare workers (entry, queues, Durable Object wrappers)";
}

/** Fails at once, before a run, when perf is missing. */
export function requirePerf() {
  try {
    execFileSync("perf", ["--version"], { stdio: "ignore" });
  } catch {
    throw new Error("BENCH_PERF=1 needs perf (Debian: apt-get install linux-perf)");
  }
}

/** Starts `perf record` on the given workerd processes; `stop` ends it and folds the busiest thread's samples. */
export function profileThreads(pids: number[], hz = 499) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "p6-perf-"));
  const data = path.join(dir, "perf.data");
  const started = Date.now();
  const perf = spawn(
    "perf",
    ["record", "-q", "-e", "cpu-clock", "-F", String(hz), "-g", "-p", pids.join(","), "-o", data],
    { stdio: "ignore" },
  );
  const recording = once(perf, "exit");
  return {
    async stop(): Promise<ThreadProfile> {
      const seconds = (Date.now() - started) / 1000;
      perf.kill("SIGINT");
      await recording;
      try {
        return await fold(data, seconds, hz);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

async function fold(data: string, seconds: number, hz: number): Promise<ThreadProfile> {
  const script = spawn("perf", ["script", "-i", data, "-F", "tid,ip,sym"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  const byThread = new Map<string, Map<string, number>>();
  let tid = "";
  let frames: string[] = [];
  const flush = () => {
    if (frames.length === 0) return;
    const owners = byThread.get(tid) ?? new Map<string, number>();
    const owner = ownerOf(frames);
    owners.set(owner, (owners.get(owner) ?? 0) + 1);
    byThread.set(tid, owners);
    frames = [];
  };
  for await (const line of createInterface({ input: script.stdout })) {
    if (line.startsWith("\t")) frames.push(line.trim());
    else if (line.trim()) {
      flush();
      tid = line.trim();
    }
  }
  flush();
  const count = (owners: Map<string, number>) => [...owners.values()].reduce((a, b) => a + b, 0);
  const busiest = [...byThread.values()].sort((a, b) => count(b) - count(a))[0] ?? new Map();
  const total = count(busiest);
  if (total === 0)
    throw new Error("perf recorded no samples of workerd (see `perf record` and perf_event_paranoid)");
  return {
    seconds,
    cpuShare: total / hz / seconds,
    parts: [...busiest]
      .sort((a, b) => b[1] - a[1])
      .map(([name, samples]) => ({ name, share: samples / total })),
  };
}

/**
 * Removes the perf maps (1–4 MB each) written to /tmp since `since` (ms): the service's workerd processes' and
 * those of the one-off `wrangler` commands `npm run dev` runs before it.
 */
export function removePerfMaps(since: number) {
  for (const name of readdirSync("/tmp")) {
    if (!/^perf-\d+\.map$/.test(name)) continue;
    const file = path.join("/tmp", name);
    try {
      if (statSync(file).mtimeMs >= since) rmSync(file);
    } catch {}
  }
}
