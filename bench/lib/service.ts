import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readDevVars } from "../../scripts/lib/dev-vars.ts";
import { groupGone, portTaken, startGroup, stopGroup, waitForLine } from "../../scripts/lib/processes.ts";

export type Service = {
  base: string;
  /** The ports it listens on: the ones asked for, or the pair after them when those were taken. */
  ports: { api: number; engine: number; inspector: number };
  /** The `npm run dev` process: the Worker (workerd) and the engine run below it. */
  pid: number;
  apiKey: string;
  accountId: string;
  admin: (path: string, init?: RequestInit) => Promise<Response>;
  /** Stops `npm run dev` and removes its state once every process of it has exited. */
  stop: () => Promise<void>;
};

/**
 * wrangler dev's local trace collector (X_LOCAL_OBSERVABILITY, on by default in wrangler 4.164: the local explorer's
 * logs and traces) receives a tail event for every invocation of the Worker, its Durable Objects and its queue
 * consumer, and stores it, on the same workerd thread as the Worker. Under bench:load it took 16 % of that thread's
 * CPU, 12 points of a core (perf; docs/performance.md "The Worker's thread in `wrangler dev`").
 * Production has no such collector on the Worker's thread, so benchmarks turn it off; BENCH_LOCAL_TRACES=1 keeps
 * wrangler's default.
 */
export const LOCAL_TRACES = process.env.BENCH_LOCAL_TRACES === "1";

/**
 * Where every bench's service keeps its throwaway local state (D1 and Durable Object SQLite, R2): tmpfs when the
 * machine has one (BENCH_STATE_ON_DISK=1: the temp dir). workerd commits each local SQLite write with an fsync
 * on the thread that runs the Worker: on disk, under `npm run bench`'s authenticated reads, the fsyncs of the
 * key gate's rate window took 15 % of that thread (perf, docs/performance.md), and under bench:load every fsync
 * of the local D1 waited for the engine's downloads on the same disk (a loaded probe's Worker half 830 ms p50
 * instead of 240). In production, D1 and Durable Object storage do not fsync on the Worker's thread.
 */
export const STATE_PARENT =
  process.env.BENCH_STATE_ON_DISK !== "1" && existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir();

/**
 * Starts the service exactly as `npm run dev` does, on its own ports and with its own fresh local state, so a
 * benchmark never touches a developer's running instance or data; only wrangler's local trace collector is off
 * (LOCAL_TRACES).
 */
export async function startService(
  options: {
    port?: number;
    enginePort?: number;
    inspectorPort?: number;
    /** Where the fresh local state (D1, Durable Objects, R2) is made; STATE_PARENT by default. */
    stateParent?: string;
    /**
     * A seeded state directory the fresh one starts as a copy of (test/support/seeded-state.ts: the fonts
     * already in the local bucket, the migrations applied, the dev account made); empty by default.
     */
    stateTemplate?: string;
    quiet?: boolean;
    /** More environment for `npm run dev` (bench:load's BENCH_PERF: V8's perf maps). */
    env?: Record<string, string>;
    /** How long to wait for `npm run dev` to come up (default 5 min). */
    readyTimeoutMs?: number;
  } = {},
  /** Tries left when a port is taken: callers pick ports at random on a machine others share. */
  attempts = 3,
): Promise<Service> {
  const root = path.resolve(import.meta.dirname, "../..");
  const port = options.port ?? 8797;
  const ports = {
    api: port,
    engine: options.enginePort ?? port + 1,
    inspector: options.inspectorPort ?? port + 442,
  };
  const stateDir = mkdtempSync(path.join(options.stateParent ?? STATE_PARENT, "p6-bench-state-"));
  if (options.stateTemplate) cpSync(options.stateTemplate, stateDir, { recursive: true });
  const lines: string[] = [];
  const seen: string[] = [];
  const child = startGroup("dev", process.execPath, [path.join(root, "scripts/dev.ts")], {
    cwd: root,
    env: {
      PORT: String(ports.api),
      ENGINE_PORT: String(ports.engine),
      P6_STATE_DIR: stateDir,
      ...(LOCAL_TRACES ? {} : { X_LOCAL_OBSERVABILITY: "false" }),
      ...options.env,
      INSPECTOR_PORT: String(ports.inspector),
    },
    onLine: (line) => {
      lines.push(line);
      seen.push(line);
    },
    quiet: options.quiet ?? true,
  });
  let accountId: string | undefined;
  let apiKey: string | undefined;
  try {
    [, accountId] = await waitForLine(child, lines, /Dev account (\S+)/, options.readyTimeoutMs ?? 300_000);
    [, apiKey] = await waitForLine(child, lines, /API key:\s+(\S+)/, 10_000);
  } catch (error) {
    stopGroup(child);
    await groupGone(child, 15_000);
    rmSync(stateDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    if (attempts > 1 && portTaken(seen)) {
      const next = { port: ports.api + 2, enginePort: ports.engine + 2, inspectorPort: ports.inspector + 2 };
      return startService({ ...options, ...next }, attempts - 1);
    }
    throw new Error(
      `npm run dev did not come up: ${(error as Error).message}\n${seen.slice(-40).join("\n")}`,
    );
  }
  const base = `http://127.0.0.1:${ports.api}`;
  const token = readDevVars(path.join(root, ".dev.vars")).ADMIN_TOKEN;
  return {
    base,
    ports,
    pid: child.pid!,
    apiKey: apiKey!,
    accountId: accountId!,
    admin: (p, init = {}) =>
      fetch(`${base}${p}`, {
        ...init,
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...init.headers },
      }),
    stop: async () => {
      stopGroup(child);
      // The state goes once the whole group has exited: workerd writes it until then (rmSync failed with
      // ENOTEMPTY on a Durable Object's directory when a second service stopped right after the first).
      if (!(await groupGone(child, 15_000))) stopGroup(child, "SIGKILL");
      await groupGone(child, 5_000);
      rmSync(stateDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}

/** A key without a practical rate limit, so throughput benchmarks measure work rather than 429s. */
export async function unlimitedKey(service: Service) {
  const response = await service.admin(`/admin/v1/accounts/${service.accountId}/keys`, {
    method: "POST",
    body: JSON.stringify({ name: "bench", rate_limit_per_minute: 100_000 }),
  });
  if (response.status !== 201) throw new Error(`creating the bench key failed: ${response.status}`);
  return ((await response.json()) as { key: string }).key;
}
