/**
 * npm run bench:load — engine capacity under a steady mixed load (issue 13), against the service started as
 * `npm run dev` starts it (its own ports and state):
 *  1. idle: synchronous probes from the well-behaved accounts alone (BENCH_IDLE_SECONDS, default as long as the
 *     load, so that both p99s come from as many probes);
 *  2. load (BENCH_LOAD_SECONDS, default 120 s): task creations at 5/s from 10 accounts (autocannon, open loop),
 *     synchronous calls from 10 other accounts (each one call at a time, paced), and one hostile account
 *     running sources that send one byte every 5 s and 16.8 MP image watermarks, without pause;
 *  3. drain: waits for every task to end (at most BENCH_DRAIN_SECONDS, default 300 s; 10 s under BENCH_SMOKE,
 *     whose hostile drip-source tasks would otherwise hold the smoke test for two minutes).
 * Prints tasks created/succeeded/failed by cause, p50/p99 per route for the well-behaved accounts in both
 * phases, the hostile account's answers, and the peak RSS of workerd and the engine. Goals: no task failed
 * for capacity, no well-behaved synchronous call failed, load p99 of the probes within 2× the idle p99.
 * The engine's environment passes through (ENGINE_LIGHT_SLOTS=0 ENGINE_TASK_NICE=0 npm run bench:load runs
 * without the probe lane and the task priority, for an A/B in the same conditions); the summary prints it.
 * BENCH_CORES=split runs the Worker and the engine on cores of their own, as production does (splitCores).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import autocannon from "autocannon";
import { chooseEngineFfmpeg, describeFfmpeg } from "../scripts/lib/engine-ffmpeg.ts";
import { type IsolateProfileSummary, profileIsolate } from "./lib/isolate-profile.ts";
import { benchMedia, serveMedia } from "./lib/media.ts";
import { LOCAL_TRACES, type Service, STATE_PARENT, startService } from "./lib/service.ts";
import { BENCH_PORT, STATE_TEMPLATE, sized } from "./lib/smoke.ts";
import { type TaskState, tallyTasks } from "./lib/tally.ts";
import { PERF_SERVICE_ENV, profileThreads, removePerfMaps, requirePerf } from "./lib/thread-profile.ts";

const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? sized(120, 3));
/**
 * As long as the load by default: the goal compares two p99s, and with the 20 s idle run used until
 * 2026-11-26 the idle one was the slowest of 40 probes (one outlier moved the printed ratio from 4.6× to 1.1×).
 */
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? LOAD_SECONDS);
const DRAIN_SECONDS = Number(process.env.BENCH_DRAIN_SECONDS ?? sized(300, 10));
const TASKS_PER_SECOND = 5;
/** Each synchronous account starts a call every this many ms (if its previous one has ended). */
const SYNC_PACE_MS = 2500;
const TASK_ACCOUNTS = 10;
const SYNC_ACCOUNTS = 10;
/**
 * The hostile account's concurrent slow-source calls and 16.8 MP watermarks, and its drip-source tasks.
 * BENCH_HOSTILE=0 leaves the hostile account out, to measure what it costs the others.
 */
const HOSTILE = process.env.BENCH_HOSTILE !== "0";
const HOSTILE_SLOW = HOSTILE ? 6 : 0;
const HOSTILE_LARGE = HOSTILE ? 2 : 0;
const HOSTILE_TASKS = HOSTILE ? 6 : 0;
/**
 * BENCH_CORES=split: the Worker's processes on one core, the engine's and the bench's on the others (see
 * splitCores); "shared" (the default): wherever the scheduler puts them.
 */
const CORES = process.env.BENCH_CORES ?? "shared";
if (CORES !== "shared" && CORES !== "split")
  throw new Error(`BENCH_CORES must be shared or split, not ${CORES}`);
/** BENCH_PROFILE=1: CPU-profile the Worker's isolate during each phase (how busy it was, and with what). */
const PROFILE = process.env.BENCH_PROFILE === "1";
/**
 * BENCH_PERF=1: `perf` samples of the Worker's workerd thread during the load, by script (bench/lib/thread-profile.ts):
 * the Worker, miniflare's local D1 and R2, wrangler's trace collector. Needs perf (Debian's linux-perf).
 */
const PERF = process.env.BENCH_PERF === "1";
/**
 * BENCH_TASKS_APART=1: the task accounts (and the hostile account's tasks) use a second `npm run dev`, with state
 * of its own, on the same engine. In production a task's Worker-side work (its creation, queue consumer,
 * Durable Object, webhooks) runs in isolates other than the ones serving synchronous calls; one `wrangler dev`
 * runs it all on one thread. This measures what the synchronous calls pay for that, on the same cores. The
 * peak RSS and BENCH_PERF cover the first service (and the engine) only; the hostile account's tasks and its
 * synchronous calls count against separate shares of the engine (each service keeps its own).
 * BENCH_TASKS_APART=niced: the same, with the second service's processes at nice 10, so that they take the CPU
 * they share with the engine only when the engine leaves it (on two cores the second service has no core of its
 * own, while in production it is not on the engine's machine at all).
 */
const TASKS_APART_MODE = process.env.BENCH_TASKS_APART ?? "";
if (!["", "0", "1", "niced"].includes(TASKS_APART_MODE))
  throw new Error(`BENCH_TASKS_APART must be 1 or niced, not ${TASKS_APART_MODE}`);
const TASKS_APART = TASKS_APART_MODE === "1" || TASKS_APART_MODE === "niced";
const TASKS_APART_NICE = TASKS_APART_MODE === "niced" ? 10 : 0;
/**
 * BENCH_SAMPLES=<file>: every call's sample (route, status, ms, Server-Timing phases) written there as JSON, by
 * phase ({ idle, load, hostile }): a p99 of 120 calls is their second slowest, so comparing two variants of the
 * code needs the calls of several runs pooled.
 */
const SAMPLES_FILE = process.env.BENCH_SAMPLES;

type Sample = {
  route: string;
  ms: number;
  status: number;
  code?: string;
  detail?: string;
  /** Server-Timing phases (ms) the Worker reported: auth, engine, fetch, process, store, total. */
  phases?: Record<string, number>;
};

/** `auth;dur=1.2, total;dur=3.4` → { auth: 1.2, total: 3.4 }. */
const parseServerTiming = (header: string | null) =>
  Object.fromEntries(
    [...(header ?? "").matchAll(/([\w-]+);dur=([\d.]+)/g)].map((m) => [m[1]!, Number(m[2])]),
  );

/** The time of day (UTC), for the phase lines: runs are matched with system samplers by it. */
const clock = () => new Date().toISOString().slice(11, 19);

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

/** The processes below `root` (the `npm run dev` process), with their command lines. */
function processesBelow(root: number): { pid: number; cmd: string }[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {}
  }
  const below = (pid: number) => {
    for (let p = pid; p > 1; p = parent.get(p) ?? 0) if (p === root) return true;
    return false;
  };
  const found: { pid: number; cmd: string }[] = [];
  for (const pid of parent.keys()) {
    if (!below(pid)) continue;
    try {
      found.push({ pid, cmd: readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ") });
    } catch {}
  }
  return found;
}

/** Peak RSS (MiB) of the service's workerd and engine processes: every process below `root`, sampled. */
function rssSampler(root: number) {
  const peak = { workerd: 0, engine: 0 };
  const sample = () => {
    for (const { pid, cmd } of processesBelow(root)) {
      try {
        const rss =
          Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
        if (cmd.includes("workerd")) peak.workerd = Math.max(peak.workerd, rss);
        if (cmd.includes("containers/ffmpeg/src/main.ts")) peak.engine = Math.max(peak.engine, rss);
      } catch {}
    }
  };
  const timer = setInterval(sample, 500);
  return { peak, stop: () => clearInterval(timer) };
}

/**
 * The machine's CPU time since boot from /proc/stat, in clock ticks: all of it, the part no process used
 * (idle and iowait), and the part niced processes used (the tasks' ffmpeg runs at ENGINE_TASK_NICE).
 */
function cpuTicks() {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync("/proc/stat", "utf8")
    .split("\n")[0]!
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number) as [number, number, number, number, number, number, number, number];
  return { total: user + nice + system + idle + iowait + irq + softirq + steal, free: idle + iowait, nice };
}

/** How busy the machine's cores were during `work`: "83% busy (niced 21%)" of all its cores' time. */
async function cpuDuring<T>(work: () => Promise<T>): Promise<{ result: T; cpu: string }> {
  const before = cpuTicks();
  const result = await work();
  const after = cpuTicks();
  const total = after.total - before.total;
  const share = (ticks: number) => `${((ticks / total) * 100).toFixed(0)}%`;
  return {
    result,
    cpu: `${share(total - (after.free - before.free))} busy (niced ${share(after.nice - before.nice)})`,
  };
}

/**
 * BENCH_CORES=split: `wrangler dev` and every process below it (the Worker's workerd, its proxy, esbuild) on
 * CPU 0; the rest of `npm run dev` (the engine, the ffmpeg and ffprobe it starts later, which inherit its
 * affinity) and the bench itself on the other CPUs. In production the Worker runs on Cloudflare's machines and
 * the engine in a container of its own; sharing two cores, each queues behind the other's CPU.
 */
function splitCores(root: number, taskRoot?: number) {
  const cpus = os.availableParallelism();
  if (cpus < 2) throw new Error("BENCH_CORES=split needs at least 2 CPUs");
  const rest = cpus === 2 ? "1" : `1-${cpus - 1}`;
  const pin = (pid: number, list: string) =>
    execFileSync("taskset", ["-a", "-p", "-c", list, String(pid)], { stdio: "ignore" });
  const all = processesBelow(root);
  const wranglers = all.filter((p) => p.cmd.includes("node_modules/.bin/wrangler")).map((p) => p.pid);
  if (wranglers.length === 0) throw new Error("BENCH_CORES=split: no wrangler process found");
  const worker = new Set(wranglers.flatMap((pid) => [pid, ...processesBelow(pid).map((p) => p.pid)]));
  for (const { pid } of all) pin(pid, worker.has(pid) ? "0" : rest);
  pin(process.pid, rest);
  // BENCH_TASKS_APART: the tasks' `npm run dev`, all of it, beside the engine.
  const apart = taskRoot === undefined ? [] : [taskRoot, ...processesBelow(taskRoot).map((p) => p.pid)];
  for (const pid of apart) pin(pid, rest);
  return `split (wrangler dev's ${worker.size} processes on CPU 0; the engine, its processes${apart.length > 0 ? ", the tasks' npm run dev" : ""} and the bench on CPU ${rest})`;
}

/** A source that answers at once and then sends one byte every 5 s (the attack of issue 13). */
async function dripServer() {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-length": 50_000_000, "content-type": "video/mp4" });
    res.write(Buffer.alloc(1));
    const timer = setInterval(() => res.write(Buffer.alloc(1)), 5000);
    res.on("close", () => clearInterval(timer));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/drip.mp4`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

async function newAccountKey(service: Service, name: string) {
  const account = await service.admin("/admin/v1/accounts", {
    method: "POST",
    body: JSON.stringify({ name, credits: 1_000_000 }),
  });
  if (account.status !== 201) throw new Error(`creating ${name}: ${account.status} ${await account.text()}`);
  const { id } = (await account.json()) as { id: string };
  const key = await service.admin(`/admin/v1/accounts/${id}/keys`, {
    method: "POST",
    body: JSON.stringify({ name: "load", rate_limit_per_minute: 100_000 }),
  });
  if (key.status !== 201) throw new Error(`key for ${name}: ${key.status}`);
  return ((await key.json()) as { key: string }).key;
}

let idem = 0;
async function syncCall(service: Service, key: string, route: string, body: unknown): Promise<Sample> {
  const started = performance.now();
  try {
    const res = await fetch(`${service.base}${route}`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${key}`,
        "Content-Type": "application/json",
        "Idempotency-Key": `load-${process.pid}-${++idem}`,
        "X-Debug-Timing": "1",
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    const problem = res.ok ? undefined : (JSON.parse(text) as { code?: string; detail?: string });
    return {
      route,
      ms: performance.now() - started,
      status: res.status,
      phases: parseServerTiming(res.headers.get("server-timing")),
      ...(problem ? { code: problem.code ?? "?", detail: problem.detail ?? "" } : {}),
    };
  } catch (error) {
    return { route, ms: performance.now() - started, status: 0, code: String(error) };
  }
}

/** Each account in turn: one call at a time, one every SYNC_PACE_MS, until `until`. */
async function paced(keys: string[], until: number, call: (key: string, i: number) => Promise<Sample>) {
  const samples: Sample[] = [];
  await Promise.all(
    keys.map(async (key, a) => {
      await new Promise((r) => setTimeout(r, (a * SYNC_PACE_MS) / keys.length));
      for (let i = 0; Date.now() < until; i++) {
        const started = Date.now();
        samples.push(await call(key, i));
        await new Promise((r) => setTimeout(r, Math.max(0, SYNC_PACE_MS - (Date.now() - started))));
      }
    }),
  );
  return samples;
}

function summarize(label: string, samples: Sample[]) {
  const routes = [...new Set(samples.map((s) => s.route))].sort();
  for (const route of routes) {
    const mine = samples.filter((s) => s.route === route);
    const ok = mine.filter((s) => s.status === 200).map((s) => s.ms);
    const failed = mine.filter((s) => s.status !== 200);
    const causes = Object.entries(
      failed.reduce<Record<string, number>>((acc, s) => {
        const k = `${s.status} ${s.code ?? ""}`.trim();
        acc[k] = (acc[k] ?? 0) + 1;
        return acc;
      }, {}),
    )
      .map(([k, n]) => `${k}: ${n}`)
      .join(", ");
    const details = [...new Set(failed.map((s) => s.detail).filter(Boolean))].slice(0, 3);
    if (details.length > 0) console.log(`  ${label} ${route} failures say: ${details.join(" | ")}`);
    console.log(
      `${label} ${route}: ${mine.length} calls, ${failed.length} failed${causes ? ` (${causes})` : ""}, ` +
        `p50 ${percentile(ok, 50).toFixed(0)} ms, p99 ${percentile(ok, 99).toFixed(0)} ms`,
    );
    // Where the time went: the Worker's phases, and what the client saw before and after the Worker's total.
    const okSamples = mine.filter((s) => s.status === 200 && s.phases?.total !== undefined);
    const names = [...new Set(okSamples.flatMap((s) => Object.keys(s.phases!)))];
    const phase = (name: string) => okSamples.map((s) => s.phases![name] ?? 0);
    const parts = names.map(
      (n) => `${n} ${percentile(phase(n), 50).toFixed(0)}/${percentile(phase(n), 99).toFixed(0)}`,
    );
    const outside = okSamples.map((s) => s.ms - s.phases!.total!);
    if (okSamples.length > 0)
      console.log(
        `  ${label} ${route} phases p50/p99 ms: ${parts.join(", ")}, outside the Worker ` +
          `${percentile(outside, 50).toFixed(0)}/${percentile(outside, 99).toFixed(0)}`,
      );
  }
}

/** A 4096×4096 JPEG (16.8 MP, the image limit), made once. */
function largeImage(file: (name: string) => string) {
  const path = file("photo-16mp.jpg");
  if (!existsSync(path)) {
    execFileSync(process.env.FFMPEG_PATH ?? "ffmpeg", [
      ...["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=4096x4096"],
      ...["-frames:v", "1", "-q:v", "4", path],
    ]);
  }
}

async function main() {
  const started = Date.now();
  if (PERF) requirePerf();
  const loadBefore = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
  const file = benchMedia();
  largeImage(file);
  const media = await serveMedia();
  const drip = await dripServer();
  // BENCH_PORT: ports +0 to +12 from it; otherwise a random range.
  const port = process.env.BENCH_PORT ? BENCH_PORT : 20_000 + Math.floor(Math.random() * 20_000);
  console.log(`Starting the service (npm run dev on port ${port})…`);
  const service = await startService({
    port,
    enginePort: port + 1,
    inspectorPort: port + 2,
    stateParent: STATE_PARENT,
    stateTemplate: STATE_TEMPLATE,
    ...(PERF ? { env: PERF_SERVICE_ENV } : {}),
  });
  const taskService = TASKS_APART
    ? await startService({
        port: port + 10,
        inspectorPort: port + 12,
        stateParent: STATE_PARENT,
        stateTemplate: STATE_TEMPLATE,
        env: { P6_ENGINE_URL: `http://127.0.0.1:${service.ports.engine}` },
      }).catch(async (error: unknown) => {
        await service.stop();
        throw error;
      })
    : service;
  const profiled: Record<string, IsolateProfileSummary> = {};
  const profileDuring = async <T>(phase: string, work: () => Promise<T>): Promise<T> => {
    if (!PROFILE) return work();
    const profiler = await profileIsolate(service.ports.inspector);
    const result = await work();
    profiled[phase] = await profiler.stop();
    return result;
  };
  const rss = rssSampler(service.pid);
  const cores =
    CORES === "split"
      ? splitCores(service.pid, TASKS_APART ? taskService.pid : undefined)
      : "shared (no affinity set)";
  if (TASKS_APART_NICE > 0)
    for (const pid of [taskService.pid, ...processesBelow(taskService.pid).map((p) => p.pid)])
      os.setPriority(pid, TASKS_APART_NICE);
  try {
    const taskKeys = await Promise.all(
      Array.from({ length: TASK_ACCOUNTS }, (_, i) => newAccountKey(taskService, `tasks-${i}`)),
    );
    const syncKeys = await Promise.all(
      Array.from({ length: SYNC_ACCOUNTS }, (_, i) => newAccountKey(service, `sync-${i}`)),
    );
    // BENCH_HOSTILE=0: no hostile account at all (its calls and tasks are counts of 0 below).
    const hostileKey = HOSTILE ? await newAccountKey(service, "hostile") : "";
    const hostileTaskKey = HOSTILE && TASKS_APART ? await newAccountKey(taskService, "hostile") : hostileKey;

    const wellBehaved = (key: string, i: number) =>
      (i + syncKeys.indexOf(key)) % 2 === 0
        ? syncCall(service, key, "/v1/video/probe", { source_url: media.url("clip.mp4") })
        : syncCall(service, key, "/v1/image/watermark", {
            source_url: media.url("photo-720.jpg"),
            params: { text: "load" },
          });

    // Warm-up, so the idle run does not measure first compilations.
    for (const key of syncKeys.slice(0, 2)) await wellBehaved(key, 0);
    console.log(`${clock()} Idle run: ${IDLE_SECONDS} s of synchronous calls alone…`);
    // The bench's own event-loop delay: what of the latencies below is the load generator's, not the service's.
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const { result: idle, cpu: idleCpu } = await cpuDuring(() =>
      profileDuring("idle", () => paced(syncKeys, Date.now() + IDLE_SECONDS * 1000, wellBehaved)),
    );
    const idleLag = { p50: lag.percentile(50) / 1e6, p99: lag.percentile(99) / 1e6 };
    lag.reset();

    console.log(`${clock()} Load run: ${LOAD_SECONDS} s…`);
    const until = Date.now() + LOAD_SECONDS * 1000;
    const taskIds: string[] = [];
    const createFailures: Record<string, number> = {};
    let next = 0;
    const TASK_BODIES = [
      { type: "video.probe", source_url: media.url("clip.mp4") },
      { type: "video.extract-cover", source_url: media.url("clip.mp4"), params: { time: 1 } },
      { type: "image.watermark", source_url: media.url("photo-720.jpg"), params: { text: "task" } },
      { type: "video.trim", source_url: media.url("clip.mp4"), params: { start: 1, end: 3 } },
    ];
    const tasks = autocannon({
      url: taskService.base,
      connections: 10,
      overallRate: TASKS_PER_SECOND,
      duration: LOAD_SECONDS,
      requests: [
        {
          method: "POST",
          path: "/v1/tasks",
          setupRequest: (request) => {
            const i = next++;
            return {
              ...request,
              headers: {
                authorization: `Bearer ${taskKeys[i % taskKeys.length]}`,
                "content-type": "application/json",
              },
              body: JSON.stringify(TASK_BODIES[i % TASK_BODIES.length]),
            };
          },
          onResponse: (status, body) => {
            if (status === 201) taskIds.push((JSON.parse(body) as { id: string }).id);
            else createFailures[String(status)] = (createFailures[String(status)] ?? 0) + 1;
          },
        },
      ],
    });
    const hostile: Promise<Sample[]>[] = [];
    const loop = async (call: () => Promise<Sample>) => {
      const samples: Sample[] = [];
      while (Date.now() < until) {
        const sample = await call();
        samples.push(sample);
        if (sample.status === 503) await new Promise((r) => setTimeout(r, 250));
      }
      return samples;
    };
    for (let i = 0; i < HOSTILE_SLOW; i++) {
      hostile.push(
        loop(() =>
          syncCall(service, hostileKey, i % 2 ? "/v1/video/probe" : "/v1/video/extract-audio", {
            source_url: drip.url,
          }),
        ),
      );
    }
    for (let i = 0; i < HOSTILE_LARGE; i++) {
      hostile.push(
        loop(() =>
          syncCall(service, hostileKey, "/v1/image/watermark", {
            source_url: media.url("photo-16mp.jpg"),
            params: { text: "hostile" },
          }),
        ),
      );
    }
    const hostileTasks = async () => {
      // The attack of issue 13 as tasks too: six tasks on the dripping source.
      for (let i = 0; i < HOSTILE_TASKS; i++) {
        await fetch(`${taskService.base}/v1/tasks`, {
          method: "POST",
          headers: { Authorization: `Bearer ${hostileTaskKey}`, "Content-Type": "application/json" },
          body: JSON.stringify({ type: "video.extract-audio", source_url: drip.url }),
        });
      }
    };
    const threads = PERF
      ? profileThreads(
          processesBelow(service.pid)
            .filter((p) => p.cmd.includes("workerd"))
            .map((p) => p.pid),
        )
      : undefined;
    const {
      result: [loaded, taskRun, hostileSamples],
      cpu: loadCpu,
    } = await cpuDuring(() =>
      profileDuring("load", () =>
        Promise.all([
          paced(syncKeys, until, wellBehaved),
          tasks,
          Promise.all(hostile).then((all) => all.flat()),
          hostileTasks(),
        ]),
      ),
    );
    const threadProfile = await threads?.stop();

    const loadLag = { p50: lag.percentile(50) / 1e6, p99: lag.percentile(99) / 1e6 };
    lag.disable();
    console.log(
      `${clock()} Draining: waiting for ${taskIds.length} tasks to end (at most ${DRAIN_SECONDS} s)…`,
    );
    // Every task of the task accounts, by its latest state. The listing, not only the recorded 201s, is the
    // truth: a creation whose answer autocannon did not record still made a task (bench/lib/tally.ts).
    const listed = new Map<string, TaskState>();
    const drainUntil = Date.now() + DRAIN_SECONDS * 1000;
    const allEnded = () => tallyTasks(taskIds, listed).notEnded === 0;
    // Any task key can read only its own tasks: ask each account for its list instead of guessing.
    for (let first = true; first || (!allEnded() && Date.now() < drainUntil); first = false) {
      if (!first) await new Promise((r) => setTimeout(r, 2000));
      for (const key of taskKeys) {
        let cursor: string | null = null;
        do {
          const page: Response = await fetch(
            `${taskService.base}/v1/tasks?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
            { headers: { Authorization: `Bearer ${key}` } },
          );
          const body = (await page.json()) as {
            results: { id: string; status: string; error: { code: string } | null }[];
            next_cursor?: string | null;
          };
          for (const t of body.results) {
            listed.set(t.id, { status: t.status, ...(t.error ? { code: t.error.code } : {}) });
          }
          cursor = body.next_cursor ?? null;
        } while (cursor);
      }
    }
    rss.stop();

    const tally = tallyTasks(taskIds, listed);
    console.log("");
    console.log(
      `conditions: ${LOAD_SECONDS} s load after ${IDLE_SECONDS} s idle; ${TASKS_PER_SECOND} tasks/s from ${TASK_ACCOUNTS} accounts; ` +
        `${SYNC_ACCOUNTS} sync accounts, one call each per ${SYNC_PACE_MS / 1000} s; hostile: ${HOSTILE_SLOW} drip-source calls + ${HOSTILE_LARGE} 16.8 MP watermarks at a time, ${HOSTILE_TASKS} drip-source tasks` +
        (TASKS_APART
          ? `; tasks on a second npm run dev on the same engine (BENCH_TASKS_APART=${TASKS_APART_MODE}${TASKS_APART_NICE > 0 ? `: at nice ${TASKS_APART_NICE}` : ""})`
          : ""),
    );
    const engineEnv = [
      "ENGINE_QUEUE",
      "ENGINE_LIGHT_SLOTS",
      "ENGINE_TASK_NICE",
      "ENGINE_RESERVED_SLOTS",
      "ENGINE_RESERVE_HOLD_MS",
    ]
      .map((name) => `${name}=${process.env[name] ?? "(default)"}`)
      .join(" ");
    // What npm run dev chose and printed (scripts/lib/engine-ffmpeg.ts), said again beside the figures.
    const ffmpeg = describeFfmpeg(chooseEngineFfmpeg({ preferBuild: true, install: false }));
    console.log(
      `engine: ${engineEnv}, ffmpeg ${ffmpeg}; service state in ${STATE_PARENT}; wrangler's local traces ${LOCAL_TRACES ? "on (BENCH_LOCAL_TRACES=1)" : "off"}; load average before the run ${loadBefore}`,
    );
    console.log(`cores: ${cores}; machine CPU: idle run ${idleCpu}, load ${loadCpu}`);
    console.log(
      `tasks: ${tally.known} created (${tally.recorded} 201s recorded, ${tally.unrecorded} more listed; ` +
        `${taskRun.requests.sent} sent, create failures ${JSON.stringify(createFailures)}), ` +
        `${tally.succeeded} succeeded, ${tally.notEnded} not ended after the drain, failed by cause ${JSON.stringify(tally.failedByCause)}`,
    );
    summarize("idle", idle);
    summarize("load", loaded);
    summarize("hostile", hostileSamples);
    if (SAMPLES_FILE !== undefined && SAMPLES_FILE !== "") {
      writeFileSync(SAMPLES_FILE, JSON.stringify({ idle, load: loaded, hostile: hostileSamples }));
      console.log(`every call's sample written to ${SAMPLES_FILE}`);
    }
    const probes = (samples: Sample[]) =>
      samples.filter((s) => s.route === "/v1/video/probe" && s.status === 200).map((s) => s.ms);
    const ratio = percentile(probes(loaded), 99) / percentile(probes(idle), 99);
    const syncFailed = loaded.filter((s) => s.status !== 200).length;
    const capacityFailed = tally.capacityFailed;
    console.log(
      `probe p99 load/idle: ${ratio.toFixed(2)}x (goal ≤ 2x; ${probes(loaded).length} loaded and ${probes(idle).length} idle probes)`,
    );
    console.log(
      `well-behaved sync calls failed: ${syncFailed} (goal 0); tasks failed for capacity: ${capacityFailed} (goal 0)`,
    );
    console.log(
      `bench event-loop delay p50/p99: idle ${idleLag.p50.toFixed(0)}/${idleLag.p99.toFixed(0)} ms, ` +
        `load ${loadLag.p50.toFixed(0)}/${loadLag.p99.toFixed(0)} ms (a share of every latency above)`,
    );
    for (const [phase, summary] of Object.entries(profiled)) {
      console.log(
        `Worker isolate, ${phase} (${summary.seconds.toFixed(0)} s profiled): busy ${(summary.busyShare * 100).toFixed(0)}%; ` +
          `largest: ${summary.top.map((t) => `${t.name} ${(t.share * 100).toFixed(1)}%`).join(", ")}`,
      );
    }
    if (threadProfile)
      console.log(
        `workerd's busiest thread under load (perf, ${threadProfile.seconds.toFixed(0)} s; latencies above are slowed by it): ` +
          `${(threadProfile.cpuShare * 100).toFixed(0)}% of a core; ` +
          threadProfile.parts.map((p) => `${p.name} ${(p.share * 100).toFixed(1)}%`).join(", "),
      );
    console.log(
      `peak RSS: workerd ${rss.peak.workerd.toFixed(0)} MiB, engine ${rss.peak.engine.toFixed(0)} MiB`,
    );
  } finally {
    rss.stop();
    await Promise.all([service.stop(), taskService !== service ? taskService.stop() : undefined]);
    if (PERF) removePerfMaps(started);
    media.close();
    drip.close();
  }
}

await main();
process.exit(0);
