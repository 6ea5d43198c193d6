/**
 * MediaEngine over HTTP: the same client serves `fetch` + ENGINE_URL (development, tests) and a Container
 * stub's `fetch` (production). It only builds requests, adds the shared secret and reads the engine's
 * answers; no Node APIs, so it runs in the Worker.
 */
import {
  ENGINE_ERROR_STATUS,
  type EngineErrorBody,
  type EngineErrorCode,
  type EngineFetchedMedia,
  type EngineFetchRequest,
  type EngineJobRequest,
  type EngineJobStatus,
  type EngineJobType,
  type EngineResolveRequest,
  type EngineResult,
  type MediaEngine,
} from "./types.ts";

/**
 * Sends one request to the engine. `routingKey` is the job id when the request concerns a job, so that a
 * load-balanced fetcher sends its progress and abort calls to the instance that runs it.
 */
export type EngineFetcher = (request: Request, routingKey: string | undefined) => Promise<Response>;

export interface HttpMediaEngineOptions {
  fetcher: EngineFetcher;
  /** e.g. ENGINE_URL, or "http://engine" for a container (the host is not used there). */
  baseUrl: string;
  secret: string;
}

function unavailable(message = "the media engine is unavailable"): Response {
  const body: EngineErrorBody = { code: "SERVICE_UNAVAILABLE", message };
  return new Response(JSON.stringify(body), { status: 503, headers: { "content-type": "application/json" } });
}

export class HttpMediaEngine implements MediaEngine {
  private readonly fetcher: EngineFetcher;
  private readonly base: string;
  private readonly secret: string;

  constructor(options: HttpMediaEngineOptions) {
    this.fetcher = options.fetcher;
    this.base = options.baseUrl.replace(/\/+$/, "");
    this.secret = options.secret;
  }

  private async send(
    method: string,
    path: string,
    routingKey: string | undefined,
    body?: unknown,
    signal?: AbortSignal,
  ) {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${this.secret}` } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { ...init.headers, "content-type": "application/json" };
    }
    if (signal !== undefined) init.signal = signal;
    return this.fetcher(new Request(`${this.base}${path}`, init), routingKey);
  }

  /** POSTs that carry work: a transport failure becomes a 503 answer, an abort stays an abort. */
  private async post(path: string, routingKey: string | undefined, body: unknown, signal?: AbortSignal) {
    try {
      return await this.send("POST", path, routingKey, body, signal);
    } catch (err) {
      if (signal?.aborted) throw err;
      return unavailable();
    }
  }

  run(type: EngineJobType, body: EngineJobRequest, signal?: AbortSignal): Promise<Response> {
    return this.post(`/v1/jobs/${type}`, body.job_id, body, signal);
  }

  fetchSource(body: EngineFetchRequest, signal?: AbortSignal): Promise<Response> {
    return this.post("/v1/fetch", undefined, body, signal);
  }

  resolve(body: EngineResolveRequest, signal?: AbortSignal): Promise<Response> {
    return this.post("/v1/resolve", undefined, body, signal);
  }

  async progress(jobId: string): Promise<number | null> {
    try {
      const res = await this.send("GET", `/v1/jobs/${encodeURIComponent(jobId)}`, jobId);
      if (!res.ok) {
        await res.body?.cancel();
        return null;
      }
      return ((await res.json()) as EngineJobStatus).progress;
    } catch {
      return null;
    }
  }

  async abort(jobId: string): Promise<void> {
    try {
      const res = await this.send("DELETE", `/v1/jobs/${encodeURIComponent(jobId)}`, jobId);
      await res.body?.cancel();
    } catch {
      // Gone already, or the engine is down: either way nothing runs any more.
    }
  }
}

const isCode = (code: unknown): code is EngineErrorCode =>
  typeof code === "string" && code in ENGINE_ERROR_STATUS;

/**
 * Reads a non-2xx engine answer as a public error. Answers that are not the engine's own (a container
 * that is starting, a proxy error) become SERVICE_UNAVAILABLE, PROCESSING_TIMEOUT or INTERNAL by status;
 * an engine 401 (wrong ENGINE_SECRET) is a server fault, so INTERNAL.
 */
export async function readEngineError(res: Response): Promise<EngineErrorBody & { status: number }> {
  let body: Partial<EngineErrorBody> = {};
  try {
    body = (await res.json()) as Partial<EngineErrorBody>;
  } catch {
    // not JSON: fall through to the status
  }
  if (res.status !== 401 && isCode(body.code) && typeof body.message === "string") {
    const error: EngineErrorBody & { status: number } = {
      status: ENGINE_ERROR_STATUS[body.code],
      code: body.code,
      message: body.message,
    };
    if (typeof body.field === "string") error.field = body.field;
    return error;
  }
  if (res.status === 503) {
    return { status: 503, code: "SERVICE_UNAVAILABLE", message: "the media engine is unavailable" };
  }
  if (res.status === 504) {
    return { status: 504, code: "PROCESSING_TIMEOUT", message: "processing took too long" };
  }
  return { status: 500, code: "INTERNAL", message: "the media engine failed" };
}

/** The result metadata of a file answer (header X-Engine-Result). */
export function readEngineResult(res: Response): EngineResult {
  const header = res.headers.get("x-engine-result");
  if (header === null) throw new Error("engine answer without X-Engine-Result");
  return JSON.parse(header) as EngineResult;
}

/** The sniffed type of a /v1/fetch answer (header X-Engine-Media). */
export function readFetchedMedia(res: Response): EngineFetchedMedia {
  const header = res.headers.get("x-engine-media");
  if (header === null) throw new Error("engine answer without X-Engine-Media");
  return JSON.parse(header) as EngineFetchedMedia;
}

/** Phases of X-Engine-Timing in milliseconds, for Server-Timing. */
export function readEngineTiming(res: Response): { fetch: number; process: number } | null {
  const m = /fetch=(\d+);process=(\d+)/.exec(res.headers.get("x-engine-timing") ?? "");
  return m === null ? null : { fetch: Number(m[1]), process: Number(m[2]) };
}
