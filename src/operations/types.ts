import type { z } from "@hono/zod-openapi";
import type { Config } from "../config/config";
import type { MediaEngine, Priority } from "../engine";
import type { Timing } from "../http/timing";

export type OutputKind = "image" | "video" | "audio" | "json";

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
  outputKind: Exclude<OutputKind, "json">;
  name: string;
  contentType: string;
  body: ReadableStream<Uint8Array> | Uint8Array;
  sizeBytes: number;
  /** decisions.md §5 result fields: format, size_bytes, width, height, duration, start, end. */
  meta: Record<string, unknown>;
};

/** A result that is data, not a file (video.probe). */
export type ProducedData = { kind: "data"; data: Record<string, unknown> };

export type Produced = ProducedFile | ProducedData;

/**
 * One media operation (decisions.md §1): the single definition that the synchronous route, the task type and
 * their OpenAPI entries all come from.
 */
export type Operation<P extends z.ZodType = z.ZodType> = {
  /** "<domain>.<operation>"; the synchronous route is /v1/<domain>/<operation>. */
  type: string;
  /** The OpenAPI operationId of the synchronous route (camelCase verb + object, stable for generated clients). */
  operationId: string;
  summary: string;
  description: string;
  /** Credits charged on success (decisions.md §7). */
  cost: number;
  params: P;
  /** The synchronous response body. */
  result: z.ZodObject;
  /** An example `params` for the OpenAPI document. */
  example: z.input<P>;
  run(ctx: RunContext, sourceUrl: string, params: z.output<P>): Promise<Produced>;
};

export const defineOperation = <P extends z.ZodType>(operation: Operation<P>) => operation;
