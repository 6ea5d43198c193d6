import { OPERATIONS, type OperationType } from "@p6/contract/operations";
import { engineUnavailable } from "../capacity/unavailable";
import {
  type EngineErrorBody,
  type EngineJobRequest,
  readEngineError,
  readEngineResult,
  readEngineTiming,
} from "../engine";
import { ApiError } from "../errors/api-error";
import type { ErrorCode } from "../errors/codes";
import type { Produced, RunContext } from "./types";

const CONTENT_TYPES: Record<string, string> = {
  mp4: "video/mp4",
  webm: "video/webm",
  mkv: "video/x-matroska",
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  wav: "audio/wav",
  flac: "audio/flac",
  opus: "audio/ogg",
  ogg: "audio/ogg",
  mka: "audio/x-matroska",
  "3gp": "audio/3gpp",
  aiff: "audio/aiff",
  caf: "audio/x-caf",
};

/** Every Content-Type an output file can have (the /files route documents them): the engine's, and JSON. */
export const OUTPUT_CONTENT_TYPES = [...new Set(Object.values(CONTENT_TYPES)), "application/json"];

const EXTENSIONS: Record<string, string> = { jpeg: "jpg" };

export function contentTypeOf(format: string) {
  return CONTENT_TYPES[format] ?? "application/octet-stream";
}

/** A format's file extension (jpeg → jpg). */
export const extensionOf = (format: string) => EXTENSIONS[format] ?? format;

/** An output file's name: `<operation>.<ext>` (trim.mp4, extract-cover.jpg). */
export const outputName = (type: OperationType, format: string) =>
  `${type.split(".")[1]}.${extensionOf(format)}`;

/** The engine's typed failure as the public error; configuration faults between us and the engine are ours. */
export async function engineFailure(response: Response): Promise<ApiError> {
  const retryAfter = Number(response.headers.get("retry-after"));
  return apiErrorOf(
    await readEngineError(response),
    Number.isInteger(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}

/** An engine error body (an answer's, or a pipeline step's `failed` event) as the public error. */
export function apiErrorOf(error: EngineErrorBody, retryAfterSeconds?: number): ApiError {
  if (error.code === "VALIDATION_INVALID_ARGUMENT" && error.field) {
    return ApiError.invalid(error.field, error.message);
  }
  if (error.code === "SERVICE_UNAVAILABLE") {
    // Saturated, starting, restarting or unreachable: transient, so the client is told when to come back.
    return engineUnavailable(retryAfterSeconds, error.message);
  }
  if (error.code === "AUTH_UNAUTHORIZED" || error.code === "RESOURCE_NOT_FOUND") {
    return new ApiError("INTERNAL", undefined, {
      cause: new Error(`engine answered ${error.code}: ${error.message}`),
    });
  }
  return new ApiError(error.code as ErrorCode, error.message);
}

/** Calls the engine, turning a refused connection into 503 and an abort into the caller's timeout. */
export async function callEngine(
  ctx: Pick<RunContext, "signal" | "timing">,
  call: () => Promise<Response>,
): Promise<Response> {
  // The whole round trip (the engine's own queue and transport included), beside its fetch and process.
  const started = performance.now();
  try {
    return await call();
  } catch (cause) {
    if (ctx.signal.aborted) throw ctx.signal.reason ?? cause;
    throw engineUnavailable(
      undefined,
      "The media engine is unavailable; retry after the delay in Retry-After.",
      cause,
    );
  } finally {
    ctx.timing.add("engine", performance.now() - started);
  }
}

/**
 * Runs an operation on the media engine; the produced file is streamed through, never buffered. `extra`:
 * job fields beyond the params (a watermark's text_mark, src/operations/text-mark.ts).
 */
export async function runOnEngine(
  ctx: RunContext,
  type: OperationType,
  sourceUrl: string,
  params: object,
  extra: Pick<EngineJobRequest, "text_mark"> = {},
): Promise<Produced> {
  const response = await callEngine(ctx, () =>
    ctx.engine.run(
      type,
      {
        job_id: ctx.jobId,
        source_url: sourceUrl,
        params: params as Record<string, unknown>,
        max_source_bytes: ctx.maxSourceBytes,
        timeout_ms: ctx.timeoutMs,
        ...extra,
      },
      ctx.signal,
    ),
  );
  if (!response.ok) throw await engineFailure(response);
  const timing = readEngineTiming(response);
  if (timing) {
    ctx.timing.add("fetch", timing.fetch);
    ctx.timing.add("process", timing.process);
  }
  const { gives, result } = OPERATIONS[type];
  if (gives === "json") return { kind: "data", data: result.parse(await response.json()) };
  const meta = readEngineResult(response, result) as { format: string; size_bytes: number };
  return {
    kind: "file",
    outputKind: gives,
    name: outputName(type, meta.format),
    contentType: contentTypeOf(meta.format),
    body: response.body ?? new Uint8Array(),
    sizeBytes: meta.size_bytes,
    meta: { ...meta },
  };
}
