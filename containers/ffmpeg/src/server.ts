/**
 * The engine's HTTP surface (protocol v1, README.md): authentication, routing, the job lifecycle (queue,
 * slot, fetch, process, stream the file back, clean up); /v1/fetch is fetch-route.ts, the shared HTTP
 * plumbing http-io.ts.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { EngineConfig } from "./config.ts";
import { fetchMedia, resolveTarget } from "./fetch-route.ts";
import { abortOnDisconnect, readJson, sendError, sendJson, sourceFields, streamFile } from "./http-io.ts";
import { JobRegistry } from "./jobs.ts";
import { runFfmpeg, versionLine } from "./pipeline/ffmpeg.ts";
import { prepareJob } from "./pipeline/index.ts";
import { type JobContext, type Output, prepareImage } from "./pipeline/job.ts";
import { Relay } from "./pipeline/relay.ts";
import { runMediaJob } from "./pipeline/speculate.ts";
import { WarmCommands } from "./pipeline/warm-ffmpeg.ts";
import { WarmProbes } from "./pipeline/warm-probe.ts";
import { readTextMark } from "./pipeline/watermark.ts";
import { Pool, type Priority } from "./pool.ts";
import { withNiceness } from "./priority.ts";
import { EngineError, invalid, isJobType, type JobType, PROTOCOL_VERSION } from "./protocol.ts";
import type { FetchPolicy } from "./security/fetcher.ts";
import { LIMITS } from "./security/limits.ts";

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

/**
 * Job types light enough for the pool's light lane when synchronous: one ffprobe on a bounded read (the source's
 * size limit), nothing decoded beyond a first frame.
 */
const LIGHT: ReadonlySet<JobType> = new Set(["video.probe"]);

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;

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
  const secretDigest = createHash("sha256").update(config.secret).digest();

  const authorized = (req: http.IncomingMessage): boolean => {
    const header = req.headers.authorization ?? "";
    const token = header.startsWith("Bearer ") ? header.slice(7) : "";
    return timingSafeEqual(createHash("sha256").update(token).digest(), secretDigest);
  };

  /**
   * A job: a task (X-Engine-Priority: low) runs its processes `taskNice` steps below synchronous calls
   * (priority.ts), so saturated cores serve synchronous calls first.
   */
  function runJob(type: JobType, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const priority: Priority = req.headers["x-engine-priority"] === "low" ? "low" : "normal";
    return withNiceness(priority === "low" ? (config.taskNice ?? 0) : 0, () =>
      handleJob(type, priority, req, res),
    );
  }

  async function handleJob(
    type: JobType,
    priority: Priority,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<void> {
    const body = await readJson(req);
    const jobId = body.job_id;
    if (typeof jobId !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(jobId)) {
      throw invalid("job_id", "job_id must be 1-64 characters of letters, digits, _ or -");
    }
    const { url, maxBytes, timeoutMs } = sourceFields(body, policy, {
      maxBytes: LIMITS.defaultMaxSourceBytes,
      timeoutMs: LIMITS.defaultTimeoutMs,
    });
    const prepared = prepareJob(type, body.params, { textMark: readTextMark(body) });
    const job = jobs.create(jobId);
    const { signal } = job.controller;
    abortOnDisconnect(req, res, job.controller);
    const timer = setTimeout(
      () =>
        job.controller.abort(
          new EngineError(
            "PROCESSING_TIMEOUT",
            `processing exceeded the time budget of ${Math.round(timeoutMs / 100) / 10} s`,
          ),
        ),
      timeoutMs,
    );
    const deferred: (() => void)[] = [];
    const afterResponse: (() => void)[] = [];
    let release: (() => void) | undefined;
    let dir: string | undefined;
    const started = performance.now();
    let fetched = started;
    let processed = started;
    let failure: EngineError | undefined;
    try {
      release = await pool.acquire(signal, { priority, light: priority === "normal" && LIGHT.has(type) });
      job.state = "running";
      const running = performance.now();
      fetched = running;
      dir = await mkdtemp(path.join(tmpDir, "job-"));
      const ctx: JobContext = {
        id: jobId,
        signal,
        dir,
        config,
        relay,
        policy,
        maxSourceBytes: maxBytes,
        setProgress: (f) => {
          job.progress = Math.max(job.progress, Math.min(1, f));
        },
        markFetched: () => {
          fetched = performance.now();
        },
        defer: (fn) => deferred.push(fn),
        afterResponse: (fn) => afterResponse.push(fn),
        warmProbes,
        warmCommands,
        runFfmpeg: (args, opts) => runFfmpeg(config.binaries.ffmpeg, args, opts),
      };
      const output: Output =
        prepared.kind === "image"
          ? await prepared.run(ctx, await prepareImage(ctx, url))
          : await runMediaJob(ctx, url, prepared);
      processed = performance.now();
      job.progress = 1;
      // The slot is free as soon as the file exists; streaming it back is only I/O.
      release();
      for (const fn of deferred.splice(0)) fn();
      jobs.delete(job);
      stampLoad(res);
      const timing = `fetch=${Math.round(fetched - running)};process=${Math.round(processed - fetched)}`;
      if (output.kind === "json") {
        sendJson(res, 200, output.body, { "x-engine-timing": timing });
      } else {
        await streamFile(res, output.path, output.result.size_bytes, {
          "content-type": output.contentType,
          "x-engine-result": JSON.stringify(output.result),
          "x-engine-timing": timing,
        });
      }
      log(`job ${jobId} ${type} ok ${Math.round(performance.now() - started)}ms`);
    } catch (err) {
      const reason = signal.aborted ? signal.reason : err;
      failure =
        reason instanceof EngineError
          ? reason
          : new EngineError("INTERNAL", "internal engine error", { internal: String(err) });
      const detail =
        failure.internal === undefined ? "" : ` | ${failure.internal.replace(/\s+/g, " ").slice(0, 600)}`;
      log(`job ${jobId} ${type} failed ${failure.code}: ${failure.message}${detail}`);
    } finally {
      clearTimeout(timer);
      release?.();
      for (const fn of deferred.splice(0)) fn();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
      jobs.delete(job);
    }
    // Answer failures only once the job's processes are gone and its files removed.
    if (failure !== undefined) {
      stampLoad(res);
      sendError(res, failure);
    }
    for (const fn of afterResponse.splice(0)) fn();
  }

  /** X-Engine-Load on every answer: the Worker prefers the instance with free slots (src/engine/load.ts). */
  const stampLoad = (res: http.ServerResponse) => {
    if (res.headersSent) return;
    const { busy, total, queued } = pool.stats();
    res.setHeader("x-engine-load", `busy=${busy};slots=${total};queued=${queued}`);
  };

  const routes: Handler = async (req, res) => {
    stampLoad(res);
    const url = new URL(req.url ?? "/", "http://engine");
    const route = url.pathname;
    if (req.method === "GET" && route === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      return;
    }
    if (!authorized(req)) {
      sendJson(res, 401, { code: "INTERNAL", message: "engine authentication failed" });
      return;
    }
    if (req.method === "GET" && route === "/v1/health") {
      sendJson(res, 200, {
        ok: true,
        protocol: PROTOCOL_VERSION,
        ffmpeg: versions.ffmpeg,
        ffprobe: versions.ffprobe,
        slots: pool.stats(),
        light_slots: pool.lightStats(),
      });
      return;
    }
    if (req.method === "POST" && route === "/v1/fetch") return fetchMedia({ policy, tmpDir, log }, req, res);
    if (req.method === "POST" && route === "/v1/resolve") return resolveTarget({ policy }, req, res);
    const jobRoute = /^\/v1\/jobs\/([^/]+)$/.exec(route)?.[1];
    if (jobRoute !== undefined) {
      const name = decodeURIComponent(jobRoute);
      if (req.method === "POST" && isJobType(name)) return runJob(name, req, res);
      if (req.method === "GET") {
        const status = jobs.status(name);
        if (status === null) sendJson(res, 404, { code: "RESOURCE_NOT_FOUND", message: "no such job" });
        else sendJson(res, 200, status);
        return;
      }
      if (req.method === "DELETE") {
        const found = jobs.abort(name, new EngineError("INTERNAL", "the job was aborted"));
        if (found) res.writeHead(204).end();
        else sendJson(res, 404, { code: "RESOURCE_NOT_FOUND", message: "no such job" });
        return;
      }
    }
    sendJson(res, 404, { code: "RESOURCE_NOT_FOUND", message: "no such route" });
  };

  const handling = new Set<Promise<void>>();
  const server = http.createServer((req, res) => {
    const handled = routes(req, res)
      .catch((err: unknown) => {
        const failure =
          err instanceof EngineError ? err : new EngineError("INTERNAL", "internal engine error");
        if (!(err instanceof EngineError)) log(`request failed: ${String(err)}`);
        sendError(res, failure);
      })
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
