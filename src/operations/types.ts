import type { z } from "@hono/zod-openapi";
import type { OperationParams, OperationSpec, OperationType } from "@p6/contract/operations";
import type { Config } from "../config/config";
import type { MediaEngine, Priority } from "../engine";
import type { Timing } from "../http/timing";

/** What a runner gets: everything is passed in, nothing is read from globals. */
export type RunContext = {
  env: Env;
  config: Config;
  engine: MediaEngine;
  /** The request or task ULID: the engine job id (progress, abort). */
  jobId: string;
  signal: AbortSignal;
  timing: Timing;
  /** 512 MiB synchronous, 4 GiB as a task (decisions.md §9); images are capped at 25 MiB regardless. */
  maxSourceBytes: number;
  /** The engine's own time limit for the job. */
  timeoutMs: number;
  /** "low" for tasks: their work in the Worker waits behind synchronous calls' (src/util/semaphore.ts). */
  priority: Priority;
};

/** A produced file, streamed: the exact size is known before storing (R2 needs it for a stream). */
export type ProducedFile = {
  kind: "file";
  outputKind: "image" | "video" | "audio";
  name: string;
  contentType: string;
  body: ReadableStream<Uint8Array> | Uint8Array;
  sizeBytes: number;
  /** The operation's result fields (decisions.md §5): format, size_bytes, and its own. */
  meta: Record<string, unknown>;
};

/** A result that is data, not a file (video.probe). */
export type ProducedData = { kind: "data"; data: Record<string, unknown> };

export type Produced = ProducedFile | ProducedData;

/**
 * The Worker's part of an operation: how the synchronous route presents it and how it runs. The rest (params,
 * result, kinds, cost) is the registry's entry in @p6/contract/operations; index.ts joins the two.
 */
export type WorkerOperation<T extends OperationType> = {
  /** The OpenAPI operationId of the synchronous route (camelCase verb + object, stable for generated clients). */
  operationId: string;
  summary: string;
  description: string;
  run(ctx: RunContext, sourceUrl: string, params: OperationParams<T>): Promise<Produced>;
};

/**
 * One media operation (decisions.md §1): the registry's entry with the Worker's part, the single definition the
 * synchronous route, the task type, pipeline steps and their OpenAPI entries all come from.
 */
export type Operation = Omit<OperationSpec, "result"> & {
  /** "<domain>.<operation>"; the synchronous route is /v1/<domain>/<operation>. */
  type: OperationType;
  operationId: string;
  summary: string;
  description: string;
  /** The engine's result fields (the registry's). */
  engineResult: z.ZodObject;
  /** The synchronous response body: id, type (and url, expires_at for a file) before the result fields. */
  result: z.ZodObject;
  run(ctx: RunContext, sourceUrl: string, params: unknown): Promise<Produced>;
};
