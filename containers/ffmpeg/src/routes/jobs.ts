/**
 * POST /v1/jobs/<type> (protocol v1, README.md), one route per job type: the job's lifecycle (validate,
 * queue for a slot, fetch, process, stream the file back, clean up). It answers on the Node response itself:
 * the file goes disk → socket with backpressure (http-io.ts streamFile), the job is aborted when the client
 * goes away (abortOnDisconnect), and a failure is answered only once the job's processes are gone and its
 * files removed.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type http from "node:http";
import path from "node:path";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import type { EngineContext, EngineEnv } from "../context.ts";
import { abortOnDisconnect, checkSourceUrl, sendError, sendJson, streamFile } from "../http-io.ts";
import { runFfmpeg } from "../pipeline/ffmpeg.ts";
import { prepareJob } from "../pipeline/index.ts";
import { type JobContext, type Output, prepareImage, textMarkOf } from "../pipeline/job.ts";
import { runMediaJob } from "../pipeline/speculate.ts";
import type { Priority } from "../pool.ts";
import { withNiceness } from "../priority.ts";
import { EngineError, type JobRequest, type JobType } from "../protocol.ts";
import { LIMITS } from "../security/limits.ts";
import { stampLoad } from "./load.ts";

/**
 * Job types light enough for the pool's light lane when synchronous: one ffprobe on a bounded read (the source's
 * size limit), nothing decoded beyond a first frame.
 */
const LIGHT: ReadonlySet<JobType> = new Set(["video.probe"]);

/**
 * The handler of one job type. A task (X-Engine-Priority: low) runs its processes `taskNice` steps below
 * synchronous calls (priority.ts), so saturated cores serve synchronous calls first.
 */
export function jobRoute(engine: EngineContext, type: JobType) {
  return async (c: Context<EngineEnv, string, { out: { json: JobRequest } }>) => {
    const priority = priorityOf(c);
    await withNiceness(priority === "low" ? (engine.config.taskNice ?? 0) : 0, () =>
      handleJob(engine, type, priority, c.req.valid("json"), c.env.incoming, c.env.outgoing),
    );
    return RESPONSE_ALREADY_SENT;
  };
}

/** X-Engine-Priority: low for tasks (pool.ts). */
export const priorityOf = (c: Context): Priority =>
  c.req.header("x-engine-priority") === "low" ? "low" : "normal";

async function handleJob(
  engine: EngineContext,
  type: JobType,
  priority: Priority,
  body: JobRequest,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const { config, policy, pool, jobs, relay, warmProbes, warmCommands, tmpDir, log } = engine;
  const jobId = body.job_id;
  const url = checkSourceUrl(body.source_url, policy);
  const maxBytes = body.max_source_bytes ?? LIMITS.defaultMaxSourceBytes;
  const timeoutMs = body.timeout_ms ?? LIMITS.defaultTimeoutMs;
  const prepared = prepareJob(type, body.params, { textMark: textMarkOf(body.text_mark) });
  const job = jobs.create(jobId);
  const { signal } = job.controller;
  abortOnDisconnect(req, res, job.controller);
  const timer = jobs.timeout(job, timeoutMs);
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
    stampLoad(pool, res);
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
    stampLoad(pool, res);
    sendError(res, failure);
  }
  for (const fn of afterResponse.splice(0)) fn();
}
