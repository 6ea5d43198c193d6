/**
 * The engine's HTTP surface (protocol v1, README.md): authentication, routing, the job lifecycle (queue,
 * slot, fetch, process, stream the file back, clean up) and /v1/fetch.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { EngineConfig } from "./config.ts";
import { JobRegistry } from "./jobs.ts";
import { runFfmpeg, versionLine } from "./pipeline/ffmpeg.ts";
import { OPERATIONS } from "./pipeline/index.ts";
import { type JobContext, type Output, openInput, prepareImage } from "./pipeline/job.ts";
import { Relay } from "./pipeline/relay.ts";
import { runMediaJob } from "./pipeline/speculate.ts";
import { WarmProbes } from "./pipeline/warm-probe.ts";
import { Pool } from "./pool.ts";
import {
  EngineError,
  type FetchedMedia,
  invalid,
  isJobType,
  type JobType,
  type MediaKind,
  PROTOCOL_VERSION,
  unsupported,
} from "./protocol.ts";
import { checkUrl } from "./security/address-policy.ts";
import type { FetchPolicy } from "./security/fetcher.ts";
import { describeBytes, LIMITS } from "./security/limits.ts";
import { imageSize } from "./sniff.ts";

export interface EngineServer {
  server: http.Server;
  /** Resolves with the bound URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
  jobs: JobRegistry;
  pool: Pool;
  warmProbes: WarmProbes;
  /** This process's private temp directory. */
  tmpDir: string;
}

export interface EngineOptions {
  /** Test hooks for the fetcher (DNS resolver, trusted fixture hosts). */
  fetchPolicy?: Partial<FetchPolicy>;
  log?: (line: string) => void;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;

const IMAGE_TYPES: Record<string, string> = { png: "image/png", jpeg: "image/jpeg", webp: "image/webp" };

function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
) {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function sendError(res: http.ServerResponse, err: EngineError): void {
  sendJson(res, err.status, err.toBody());
}

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > LIMITS.maxRequestBodyBytes) {
      throw new EngineError(
        "REQUEST_BODY_TOO_LARGE",
        `the request body exceeds ${describeBytes(LIMITS.maxRequestBodyBytes)}`,
      );
    }
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw invalid("body", "the request body must be JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalid("body", "the request body must be an object");
  }
  return body as Record<string, unknown>;
}

function positiveInt(body: Record<string, unknown>, key: string, fallback: number, max: number): number {
  const value = body[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > max) {
    throw invalid(key, `${key} must be an integer between 1 and ${max}`);
  }
  return value;
}

function sourceUrl(body: Record<string, unknown>, policy: FetchPolicy): string {
  const url = body.source_url;
  if (typeof url !== "string" || url === "") throw invalid("source_url", "source_url is required");
  const check = checkUrl(url, policy);
  if (!check.ok) throw invalid("source_url", `source_url ${check.reason}`);
  return url;
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
    downloadAheadBytes: config.downloadAheadBytes,
    ...options.fetchPolicy,
  };
  const pool = new Pool(config.slots, config.queue);
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
  const secretDigest = createHash("sha256").update(config.secret).digest();

  const authorized = (req: http.IncomingMessage): boolean => {
    const header = req.headers.authorization ?? "";
    const token = header.startsWith("Bearer ") ? header.slice(7) : "";
    return timingSafeEqual(createHash("sha256").update(token).digest(), secretDigest);
  };

  /**
   * Responses whose last byte has been handed to the socket. A client may close as soon as it has
   * Content-Length bytes, before the file stream has even seen its end: that is a delivery, not an abort.
   */
  const delivered = new WeakSet<http.ServerResponse>();

  /**
   * Aborts the job when the client goes away before the response is complete, i.e. when the connection
   * (the request's socket) closes first. Two things look like a disconnect and are not: the request
   * stream's own 'close' (it closes as soon as its body has been read), and `res.socket === null`. On a
   * keep-alive connection the client may send its next request as soon as it has the previous answer's
   * Content-Length bytes, while our end of that answer is still finishing (the file stream has not seen
   * its end yet); Node then parses the new request and queues its response without a socket until the
   * previous one is done. Such a queued response gets no 'close' if the connection drops, so the socket's
   * 'close' is watched as well.
   */
  const abortOnDisconnect = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    controller: AbortController,
  ) => {
    const gone = () => {
      if (!res.writableEnded && !delivered.has(res)) {
        controller.abort(new EngineError("INTERNAL", "the client went away"));
      }
    };
    const connection = req.socket;
    if (connection.destroyed) {
      gone();
      return;
    }
    connection.once("close", gone);
    res.once("close", () => {
      connection.off("close", gone);
      gone();
    });
  };

  const streamFile = async (
    res: http.ServerResponse,
    file: string,
    size: number,
    headers: http.OutgoingHttpHeaders,
  ) => {
    res.writeHead(200, { "content-length": size, ...headers });
    // Bounded by the known size: the response ends with its last byte, not one empty read later.
    const file$ = createReadStream(file, {
      highWaterMark: 1024 * 1024,
      ...(size > 0 ? { start: 0, end: size - 1 } : {}),
    });
    let sent = 0;
    file$.on("data", (chunk) => {
      sent += chunk.length;
      if (sent >= size) delivered.add(res);
    });
    try {
      await pipeline(file$, res);
    } catch (err) {
      if (!delivered.has(res)) throw err;
    }
  };

  async function runJob(type: JobType, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readJson(req);
    const jobId = body.job_id;
    if (typeof jobId !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(jobId)) {
      throw invalid("job_id", "job_id must be 1-64 characters of letters, digits, _ or -");
    }
    const url = sourceUrl(body, policy);
    const maxSourceBytes = positiveInt(
      body,
      "max_source_bytes",
      LIMITS.defaultMaxSourceBytes,
      LIMITS.maxSourceBytesCeiling,
    );
    const timeoutMs = positiveInt(body, "timeout_ms", LIMITS.defaultTimeoutMs, LIMITS.maxTimeoutMs);
    const prepared = OPERATIONS[type](body.params);
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
    let release: (() => void) | undefined;
    let dir: string | undefined;
    const started = performance.now();
    let fetched = started;
    let processed = started;
    let failure: EngineError | undefined;
    try {
      release = await pool.acquire(signal);
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
        maxSourceBytes,
        setProgress: (f) => {
          job.progress = Math.max(job.progress, Math.min(1, f));
        },
        markFetched: () => {
          fetched = performance.now();
        },
        defer: (fn) => deferred.push(fn),
        warmProbes,
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
    if (failure !== undefined) sendError(res, failure);
  }

  async function fetchMedia(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readJson(req);
    const url = sourceUrl(body, policy);
    const maxBytes = positiveInt(
      body,
      "max_source_bytes",
      LIMITS.defaultMaxFetchBytes,
      LIMITS.maxSourceBytesCeiling,
    );
    const timeoutMs = positiveInt(body, "timeout_ms", 60_000, LIMITS.maxTimeoutMs);
    const accept = body.accept ?? ["image"];
    if (
      !Array.isArray(accept) ||
      accept.length === 0 ||
      !accept.every((k) => k === "image" || k === "video" || k === "audio")
    ) {
      throw invalid("accept", 'accept must list "image", "video" and/or "audio"');
    }
    const kinds = accept as MediaKind[];
    const controller = new AbortController();
    abortOnDisconnect(req, res, controller);
    const timer = setTimeout(
      () => controller.abort(new EngineError("PROCESSING_TIMEOUT", "fetching the source took too long")),
      timeoutMs,
    );
    const dir = await mkdtemp(path.join(tmpDir, "fetch-"));
    const deferred: (() => void)[] = [];
    const ctx = { signal: controller.signal, dir, policy, defer: (fn: () => void) => deferred.push(fn) };
    try {
      const { source, sniffed } = await openInput(ctx, url, "source_url", maxBytes, "source");
      const kind =
        sniffed === null
          ? null
          : sniffed.kind === "av"
            ? kinds.includes("video")
              ? "video"
              : "audio"
            : sniffed.kind;
      if (sniffed === null || kind === null || !kinds.includes(kind)) {
        throw unsupported(
          kinds.length === 1 && kinds[0] === "image"
            ? "the source is not a PNG, JPEG or WebP image"
            : "the source media type is not supported",
        );
      }
      const head = await source.read(0, LIMITS.sniffBytes);
      const size = await source.complete();
      const media: FetchedMedia = {
        kind,
        format: sniffed.format,
        ...(kind === "image" ? (imageSize(head) ?? {}) : {}),
      };
      await streamFile(res, source.path, size, {
        "content-type": IMAGE_TYPES[sniffed.format] ?? "application/octet-stream",
        "x-engine-media": JSON.stringify(media),
      });
    } catch (err) {
      const reason = controller.signal.aborted ? controller.signal.reason : err;
      const failure =
        reason instanceof EngineError
          ? reason
          : new EngineError("INTERNAL", "internal engine error", { internal: String(err) });
      if (failure.code === "INTERNAL") log(`fetch failed: ${failure.internal ?? failure.message}`);
      sendError(res, failure);
    } finally {
      clearTimeout(timer);
      for (const fn of deferred) fn();
      await rm(dir, { recursive: true, force: true });
    }
  }

  const routes: Handler = async (req, res) => {
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
      });
      return;
    }
    if (req.method === "POST" && route === "/v1/fetch") return fetchMedia(req, res);
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

  const server = http.createServer((req, res) => {
    routes(req, res).catch((err: unknown) => {
      const failure = err instanceof EngineError ? err : new EngineError("INTERNAL", "internal engine error");
      if (!(err instanceof EngineError)) log(`request failed: ${String(err)}`);
      sendError(res, failure);
    });
  });
  // Jobs may legitimately run for a long time; the request itself is small.
  server.requestTimeout = 60_000;

  return {
    server,
    jobs,
    pool,
    warmProbes,
    tmpDir,
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
      const deadline = Date.now() + 5000;
      while (jobs.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      server.closeAllConnections();
      warmProbes.close();
      await relay.close();
      await rm(tmpDir, { recursive: true, force: true });
    },
  };
}
