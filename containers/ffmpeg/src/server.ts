/**
 * The engine's server: builds what the routes share (pool, jobs, relay, warm processes, temp directory),
 * serves the Hono app (app.ts) on Node's HTTP server through @hono/node-server, and stops cleanly.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { getRequestListener } from "@hono/node-server";
import { createEngineApp } from "./app.ts";
import type { EngineConfig } from "./config.ts";
import type { EngineContext } from "./context.ts";
import { JobRegistry } from "./jobs.ts";
import { versionLine } from "./pipeline/ffmpeg.ts";
import { Relay } from "./pipeline/relay.ts";
import { WarmCommands } from "./pipeline/warm-ffmpeg.ts";
import { WarmProbes } from "./pipeline/warm-probe.ts";
import { Pool } from "./pool.ts";
import { EngineError } from "./protocol.ts";
import type { FetchPolicy } from "./security/fetcher.ts";

export interface EngineServer {
  server: http.Server;
  /** Resolves with the bound URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
  /**
   * Settles once every request handled now has fully ended: its response sent, its job's files removed and
   * its after-response work (warm refills) started. A job leaves `jobs` before its result is streamed, so
   * "no job" alone does not mean that.
   */
  idle(): Promise<void>;
  jobs: JobRegistry;
  pool: Pool;
  warmProbes: WarmProbes;
  warmCommands: WarmCommands;
  /** This process's private temp directory. */
  tmpDir: string;
}

export interface EngineOptions {
  /** Test hooks for the fetcher (DNS resolver, trusted fixture hosts). */
  fetchPolicy?: Partial<FetchPolicy>;
  log?: (line: string) => void;
}

/** Removes temp directories left by engine processes that no longer exist. */
async function sweepStale(root: string): Promise<void> {
  for (const name of await readdir(root).catch(() => [] as string[])) {
    const pid = Number(/^engine-(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch (err) {
      alive = (err as NodeJS.ErrnoException).code === "EPERM";
    }
    if (!alive) await rm(path.join(root, name), { recursive: true, force: true });
  }
}

export async function createEngineServer(
  config: EngineConfig,
  options: EngineOptions = {},
): Promise<EngineServer> {
  const log = options.log ?? ((line: string) => console.log(line));
  const policy: FetchPolicy = {
    allowPrivate: config.allowPrivateSources,
    connectTimeoutMs: config.connectTimeoutMs,
    readTimeoutMs: config.readTimeoutMs,
    minBytesPerSecond: config.minSourceBytesPerSecond,
    rateWindowMs: config.sourceRateWindowMs,
    downloadAheadBytes: config.downloadAheadBytes,
    ...(config.downloadLeadBytes === undefined ? {} : { downloadLeadBytes: config.downloadLeadBytes }),
    ...options.fetchPolicy,
  };
  const pool = new Pool(config.slots, config.queue, {
    reserved: config.reservedSlots ?? 0,
    lowFloor: config.taskMinSlots ?? 0,
    reserveHoldMs: config.reserveHoldMs ?? 30_000,
    lightSlots: config.lightSlots ?? 0,
  });
  const jobs = new JobRegistry();
  const relay = new Relay();
  await relay.start();
  await mkdir(config.tmpDir, { recursive: true });
  await sweepStale(config.tmpDir);
  const tmpDir = path.join(config.tmpDir, `engine-${process.pid}-${randomBytes(4).toString("hex")}`);
  await mkdir(tmpDir, { recursive: true });
  const versions = {
    ffmpeg: await versionLine(config.binaries.ffmpeg),
    ffprobe: await versionLine(config.binaries.ffprobe),
  };
  for (const [name, version] of Object.entries(versions)) {
    if (version === null) {
      await relay.close();
      throw new Error(`${name} does not run (${config.binaries[name as "ffmpeg" | "ffprobe"]})`);
    }
  }
  // MP4 is the most common source: its probe is warm from the start, other demuxers after first use.
  const warmProbes = new WarmProbes(config.binaries.ffprobe, relay, config.warmProbes);
  warmProbes.refill("mov");
  const warmCommands = new WarmCommands(config.binaries.ffmpeg, relay, tmpDir, config.warmCommands);
  const engine: EngineContext = {
    config,
    policy,
    pool,
    jobs,
    relay,
    warmProbes,
    warmCommands,
    tmpDir,
    versions,
    log,
  };
  const app = createEngineApp(engine);
  // The app answers every request itself (errors included); the listener settles once the answer is written.
  const listener = getRequestListener(app.fetch, {
    overrideGlobalObjects: false,
    autoCleanupIncoming: false,
  });

  const handling = new Set<Promise<void>>();
  const server = http.createServer((req, res) => {
    const handled = Promise.resolve(listener(req, res))
      .then(() => undefined)
      .catch((err: unknown) => log(`request failed: ${String(err)}`))
      .finally(() => handling.delete(handled));
    handling.add(handled);
  });
  const idle = async () => {
    while (handling.size > 0) await Promise.all(handling);
  };
  // Jobs may legitimately run for a long time; the request itself is small.
  server.requestTimeout = 60_000;

  return {
    server,
    jobs,
    pool,
    warmProbes,
    warmCommands,
    tmpDir,
    idle,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(config.port, config.host, () => {
          const { port } = server.address() as AddressInfo;
          resolve(`http://${config.host}:${port}`);
        });
      }),
    close: async () => {
      jobs.abortAll(new EngineError("SERVICE_UNAVAILABLE", "the engine is shutting down"));
      server.close();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([idle(), new Promise((r) => (timer = setTimeout(r, 5000)))]);
      clearTimeout(timer);
      server.closeAllConnections();
      warmProbes.close();
      warmCommands.close();
      await relay.close();
      await rm(tmpDir, { recursive: true, force: true });
    },
  };
}
