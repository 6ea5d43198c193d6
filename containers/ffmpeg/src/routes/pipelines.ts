/**
 * POST /v1/pipelines (protocol v1, README.md "Pipelines"): several operations on one source as one job
 * (pipeline/steps.ts). The answer is NDJSON, one PipelineEvent a line as the steps start, succeed or fail; the
 * client GETs each step's file (GET /v1/pipelines/<job_id>/<step>) from this instance while later steps run.
 * The job's directory is removed once every file has been served and the job has ended, or
 * PIPELINE_FILES_TTL_MS after its end at the latest; at once when the job was aborted (DELETE, timeout, or the
 * client going away, which abortOnDisconnect sees on the socket as for any job).
 */
import { createReadStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import type { Hono } from "hono";
import type { EngineContext, EngineEnv } from "../context.ts";
import { abortOnDisconnect, checkSourceUrl } from "../http-io.ts";
import { runFfmpeg } from "../pipeline/ffmpeg.ts";
import type { JobContext } from "../pipeline/job.ts";
import { type FileOutput, prepareSteps, runSteps } from "../pipeline/steps.ts";
import { withNiceness } from "../priority.ts";
import { EngineError, type PipelineEvent, PipelineRequestSchema } from "../protocol.ts";
import { LIMITS } from "../security/limits.ts";
import { priorityOf } from "./jobs.ts";
import { jsonBody } from "./validate.ts";

/** How long a finished pipeline's files wait for the client's GETs at most. */
export const PIPELINE_FILES_TTL_MS = 5 * 60_000;

interface Finished {
  files: Map<string, FileOutput>;
  /** Steps whose file has been read to its end once. */
  served: Set<string>;
  ended: boolean;
  remove: () => void;
}

export function registerPipelineRoutes(app: Hono<EngineEnv>, engine: EngineContext): void {
  const { config, policy, pool, jobs, relay, warmProbes, warmCommands, tmpDir, log } = engine;
  const pipelines = new Map<string, Finished>();

  app.post("/v1/pipelines", ...jsonBody(PipelineRequestSchema), async (c) => {
    const body = c.req.valid("json");
    const url = checkSourceUrl(body.source_url, policy);
    const steps = prepareSteps(body.steps);
    const priority = priorityOf(c);
    const jobId = body.job_id;
    const timeoutMs = body.timeout_ms ?? LIMITS.defaultTimeoutMs;
    const job = jobs.create(jobId);
    const { signal } = job.controller;
    abortOnDisconnect(c.env.incoming, c.env.outgoing, job.controller);
    const timer = jobs.timeout(job, timeoutMs);
    let release: () => void;
    let dir: string;
    try {
      release = await pool.acquire(signal, { priority });
      dir = await mkdtemp(path.join(tmpDir, "pipeline-"));
    } catch (err) {
      clearTimeout(timer);
      jobs.delete(job);
      throw signal.aborted ? signal.reason : err;
    }
    job.state = "running";
    const started = performance.now();
    const deferred: (() => void)[] = [];
    const afterResponse: (() => void)[] = [];
    const finished: Finished = {
      files: new Map(),
      served: new Set(),
      ended: false,
      remove: () => {
        if (pipelines.get(jobId) !== finished) return;
        pipelines.delete(jobId);
        clearTimeout(expiry);
        void rm(dir, { recursive: true, force: true });
      },
    };
    let expiry: NodeJS.Timeout | undefined;
    pipelines.set(jobId, finished);
    const ctx: JobContext = {
      id: jobId,
      signal,
      dir,
      config,
      relay,
      policy,
      maxSourceBytes: body.max_source_bytes ?? LIMITS.defaultMaxSourceBytes,
      setProgress: (f) => {
        job.progress = Math.max(job.progress, Math.min(1, f));
      },
      markFetched: () => {},
      defer: (fn) => deferred.push(fn),
      afterResponse: (fn) => afterResponse.push(fn),
      warmProbes,
      warmCommands,
      runFfmpeg: (args, opts) => runFfmpeg(config.binaries.ffmpeg, args, opts),
    };

    const encoder = new TextEncoder();
    let events!: ReadableStreamDefaultController<Uint8Array>;
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        events = controller;
      },
    });
    const emit = (event: PipelineEvent) => {
      try {
        events.enqueue(encoder.encode(`${JSON.stringify(event)}\n`));
      } catch {
        // The client went away: the job is aborted (abortOnDisconnect).
      }
    };
    const run = withNiceness(priority === "low" ? (config.taskNice ?? 0) : 0, () =>
      runSteps(ctx, url, steps, finished.files, emit),
    );
    void run
      .then(
        () => {
          log(`pipeline ${jobId} ok ${Math.round(performance.now() - started)}ms`);
        },
        (err: unknown) => {
          const failure = err instanceof EngineError ? err : new EngineError("INTERNAL", String(err));
          const detail = failure.internal === undefined ? "" : ` | ${failure.internal.slice(0, 600)}`;
          log(`pipeline ${jobId} failed ${failure.code}: ${failure.message}${detail}`);
        },
      )
      .finally(() => {
        clearTimeout(timer);
        release();
        for (const fn of deferred.splice(0)) fn();
        jobs.delete(job);
        finished.ended = true;
        try {
          events.close();
        } catch {
          // already closed (the client went away)
        }
        for (const fn of afterResponse.splice(0)) fn();
        if (signal.aborted || finished.served.size >= finished.files.size) finished.remove();
        else expiry = setTimeout(finished.remove, PIPELINE_FILES_TTL_MS).unref();
      });
    return new Response(stream, { headers: { "content-type": "application/x-ndjson" } });
  });

  app.get("/v1/pipelines/:job/:step", async (c) => {
    const finished = pipelines.get(c.req.param("job"));
    const step = c.req.param("step");
    const file = finished?.files.get(step);
    if (finished === undefined || file === undefined) {
      return c.json({ code: "RESOURCE_NOT_FOUND", message: "no such pipeline file" }, 404);
    }
    const read = createReadStream(file.path);
    read.once("end", () => {
      finished.served.add(step);
      if (finished.ended && finished.served.size >= finished.files.size) finished.remove();
    });
    return new Response(Readable.toWeb(read) as ReadableStream, {
      headers: {
        "content-type": file.contentType,
        "content-length": String(file.result.size_bytes),
        "x-engine-result": JSON.stringify(file.result),
      },
    });
  });
}
