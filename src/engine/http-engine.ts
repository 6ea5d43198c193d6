/**
 * MediaEngine over HTTP: the same client serves `fetch` + ENGINE_URL (development, tests) and Container
 * stubs' `fetch` (production). It only picks an instance, builds requests, adds the shared secret and reads
 * the engine's answers; no Node APIs, so it runs in the Worker.
 */

import {
  EngineResultSchema,
  ErrorBodySchema,
  FetchedMediaSchema,
  JobStatusSchema,
  PipelineEventSchema,
  parseHeader,
  pipelineFilePath,
} from "@p6/contract/wire";
import type { z } from "zod";
import { isolateLoadBoard, type LoadBoard } from "./load.ts";
import {
  ENGINE_ERROR_STATUS,
  type EngineErrorBody,
  type EngineFetchRequest,
  type EngineJobRequest,
  type EngineJobType,
  type EnginePipelineEvent,
  type EnginePipelineRequest,
  type EngineResolveRequest,
  type MediaEngine,
  type Priority,
} from "./types.ts";

/** One engine instance: a local process (ENGINE_URL) or a Container instance by name. */
export interface EngineTarget {
  /** Stable across isolates: the URL, or the Container instance name ("engine-0"…). */
  name: string;
  /** e.g. an ENGINE_URL entry, or "http://engine" for a container (the host is not used there). */
  baseUrl: string;
  fetch(request: Request): Promise<Response>;
}

export interface HttpMediaEngineOptions {
  /** The instances to spread jobs over (at least one). */
  targets: readonly EngineTarget[];
  secret: string;
  /** Where loads are remembered; default: one board per isolate. */
  loads?: LoadBoard;
  /**
   * "low" (header X-Engine-Priority: low): jobs may wait only in the first half of an engine's queue, else are
   * refused (503). Tasks use it: they wait in their runner instead, leaving room for synchronous calls.
   */
  priority?: Priority;
}

/** An engine reached by plain `fetch` at `url` (development, tests). */
export const urlTarget = (url: string): EngineTarget => ({
  name: url,
  baseUrl: url.replace(/\/+$/, ""),
  fetch: (request) => fetch(request),
});

function unavailable(message = "the media engine is unavailable"): Response {
  const body: EngineErrorBody = { code: "SERVICE_UNAVAILABLE", message };
  return new Response(JSON.stringify(body), { status: 503, headers: { "content-type": "application/json" } });
}

/**
 * A refusal that another instance may not give: the engine at capacity (503), or the Container layer's own
 * answers (plain text: no instance, rate limited, failed to start, disconnected; see readEngineError).
 */
function refusedHere(res: Response): boolean {
  if (res.status === 503) return true;
  const engineAnswer = (res.headers.get("content-type") ?? "").includes("application/json");
  return !engineAnswer && (res.status === 500 || res.status === 502 || res.status === 429);
}

/**
 * MediaEngine over HTTP, over one or more instances. A new job goes to the instance with the most free
 * slots as last heard (X-Engine-Load on every answer), and on a refusal (503, an unreachable or unstartable
 * instance) to the next one, so one busy instance does not fail a request while others idle. A refused job
 * never started, so trying it elsewhere does not run it twice; its progress and abort go to the instance
 * that took it.
 */
export class HttpMediaEngine implements MediaEngine {
  private readonly targets: readonly EngineTarget[];
  private readonly secret: string;
  private readonly loads: LoadBoard;
  private readonly priority: Priority;
  /** Job id → the instance it was sent to (set when sent, so progress finds it while it runs). */
  private readonly placed = new Map<string, EngineTarget>();

  constructor(options: HttpMediaEngineOptions) {
    if (options.targets.length === 0) throw new Error("media engine: no instance to send jobs to");
    this.targets = options.targets;
    this.secret = options.secret;
    this.loads = options.loads ?? isolateLoadBoard;
    this.priority = options.priority ?? "normal";
  }

  private request(target: EngineTarget, method: string, path: string, body?: unknown, signal?: AbortSignal) {
    const headers: Record<string, string> = { authorization: `Bearer ${this.secret}` };
    if (this.priority === "low") headers["x-engine-priority"] = "low";
    const init: RequestInit = { method, headers };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { ...init.headers, "content-type": "application/json" };
    }
    if (signal !== undefined) init.signal = signal;
    return new Request(`${target.baseUrl}${path}`, init);
  }

  /** POSTs that carry work, tried on each instance in turn; an abort stays an abort. */
  private async post(path: string, jobId: string | undefined, body: unknown, signal?: AbortSignal) {
    let message: string | undefined;
    for (const target of this.loads.order(this.targets)) {
      if (jobId !== undefined) this.placed.set(jobId, target);
      let res: Response;
      try {
        res = await target.fetch(this.request(target, "POST", path, body, signal));
      } catch (err) {
        if (signal?.aborted) throw err;
        this.loads.refused(target.name);
        continue;
      }
      if (!refusedHere(res)) {
        this.loads.observe(target.name, res.headers);
        return res;
      }
      this.loads.refused(target.name);
      this.loads.observe(target.name, res.headers);
      message = res.status === 503 ? (await readEngineError(res)).message : undefined;
      await res.body?.cancel().catch(() => {});
    }
    if (jobId !== undefined) this.placed.delete(jobId);
    return unavailable(message);
  }

  run(type: EngineJobType, body: EngineJobRequest, signal?: AbortSignal): Promise<Response> {
    return this.post(`/v1/jobs/${type}`, body.job_id, body, signal);
  }

  runPipeline(body: EnginePipelineRequest, signal?: AbortSignal): Promise<Response> {
    return this.post("/v1/pipelines", body.job_id, body, signal);
  }

  /** From the instance the job was placed on: the step's file is on its disk only. */
  async pipelineFile(jobId: string, step: string, signal?: AbortSignal): Promise<Response> {
    const target = this.placed.get(jobId) ?? (this.targets.length === 1 ? this.targets[0] : undefined);
    if (target === undefined) return unavailable("the engine that ran this pipeline is not known here");
    return target.fetch(this.request(target, "GET", pipelineFilePath(jobId, step), undefined, signal));
  }

  fetchSource(body: EngineFetchRequest, signal?: AbortSignal): Promise<Response> {
    return this.post("/v1/fetch", undefined, body, signal);
  }

  resolve(body: EngineResolveRequest, signal?: AbortSignal): Promise<Response> {
    return this.post("/v1/resolve", undefined, body, signal);
  }

  async progress(jobId: string): Promise<number | null> {
    const target = this.placed.get(jobId) ?? (this.targets.length === 1 ? this.targets[0] : undefined);
    if (target === undefined) return null;
    try {
      const res = await target.fetch(this.request(target, "GET", `/v1/jobs/${encodeURIComponent(jobId)}`));
      if (!res.ok) {
        await res.body?.cancel();
        return null;
      }
      return JobStatusSchema.parse(await res.json()).progress;
    } catch {
      return null;
    }
  }

  /** Kills a live job on the instance that took it; not knowing which (another isolate sent it), on every one. */
  async abort(jobId: string): Promise<void> {
    const placed = this.placed.get(jobId);
    await Promise.all(
      (placed ? [placed] : this.targets).map(async (target) => {
        try {
          const res = await target.fetch(
            this.request(target, "DELETE", `/v1/jobs/${encodeURIComponent(jobId)}`),
          );
          await res.body?.cancel();
        } catch {
          // Gone already, or the engine is down: either way nothing runs any more.
        }
      }),
    );
  }
}

/**
 * Reads a non-2xx engine answer as a public error. Answers that are not the engine's own (a container
 * that is starting, a proxy error) become SERVICE_UNAVAILABLE, PROCESSING_TIMEOUT or INTERNAL by status;
 * an engine 401 (wrong ENGINE_SECRET) is a server fault, so INTERNAL.
 */
export async function readEngineError(res: Response): Promise<EngineErrorBody & { status: number }> {
  const jsonAnswer = (res.headers.get("content-type") ?? "").includes("application/json");
  const body = ErrorBodySchema.safeParse(await res.json().catch(() => undefined));
  if (res.status !== 401 && body.success) {
    return { status: ENGINE_ERROR_STATUS[body.data.code], ...body.data };
  }
  if (res.status === 504) {
    return { status: 504, code: "PROCESSING_TIMEOUT", message: "processing took too long" };
  }
  // Not the engine's own answer: the Container layer's (@cloudflare/containers containerFetch answers 503 "no
  // instance available", 429 "rate limited", 500 "Failed to start container" / "suddenly disconnected" /
  // "Error proxying request", all as plain text). A container that cannot start or is restarting is as
  // transient as a busy engine: SERVICE_UNAVAILABLE, never INTERNAL.
  if (res.status === 503 || res.status === 429 || res.status === 502 || (res.status === 500 && !jsonAnswer)) {
    return { status: 503, code: "SERVICE_UNAVAILABLE", message: "the media engine is unavailable" };
  }
  return { status: 500, code: "INTERNAL", message: "the media engine failed" };
}

/**
 * The result of a file answer (header X-Engine-Result), parsed by `schema`: the operation's own result
 * (OPERATIONS[type].result) or any file result. A missing or malformed header is the engine's fault: thrown.
 */
export function readEngineResult<S extends z.ZodType = typeof EngineResultSchema>(
  res: Response,
  schema?: S,
): z.output<S> {
  const result = parseHeader(schema ?? EngineResultSchema, res.headers.get("x-engine-result"));
  if (result === null) throw new Error("engine answer without X-Engine-Result");
  return result as z.output<S>;
}

/** The sniffed type of a /v1/fetch answer (header X-Engine-Media). */
export function readFetchedMedia(res: Response) {
  const media = parseHeader(FetchedMediaSchema, res.headers.get("x-engine-media"));
  if (media === null) throw new Error("engine answer without X-Engine-Media");
  return media;
}

/**
 * The events of a pipeline answer (NDJSON), each parsed by its schema, as they arrive. A stream that ends
 * without `done` or `failed` was cut: the caller treats that as the engine failing.
 */
export async function* readPipelineEvents(res: Response): AsyncGenerator<EnginePipelineEvent> {
  if (res.body === null) return;
  let buffered = "";
  const lines = res.body.pipeThrough(new TextDecoderStream());
  for await (const chunk of lines) {
    buffered += chunk;
    let end = buffered.indexOf("\n");
    while (end >= 0) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (line !== "") yield PipelineEventSchema.parse(JSON.parse(line));
      end = buffered.indexOf("\n");
    }
  }
  if (buffered.trim() !== "") yield PipelineEventSchema.parse(JSON.parse(buffered));
}

/** Phases of X-Engine-Timing in milliseconds, for Server-Timing. */
export function readEngineTiming(res: Response): { fetch: number; process: number } | null {
  const m = /fetch=(\d+);process=(\d+)/.exec(res.headers.get("x-engine-timing") ?? "");
  return m === null ? null : { fetch: Number(m[1]), process: Number(m[2]) };
}
