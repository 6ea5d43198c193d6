/**
 * Pipeline tasks (docs/operations.md "Pipelines"): several operations on one source in one task. The graph is
 * the contract's (@p6/contract/pipeline: checked when the task is created, before anything is reserved); the
 * engine runs it as one job (POST /v1/pipelines), the source fetched once and intermediates on its disk, and
 * reports each step as it ends. Each step's output is stored here as it arrives, while later steps run, and
 * recorded on the task with the step's cost (`charged`), so a task that fails or is canceled keeps what its
 * finished steps made and is refunded the rest (transitions.ts endTask).
 */
import { OPERATIONS, type OperationType } from "@p6/contract/operations";
import { type PipelineParams, PipelineParamsSchema } from "@p6/contract/pipeline";
import { and, eq, sql } from "drizzle-orm";
import type { Config } from "../config/config";
import type { Db } from "../db/client";
import { type TaskRow, tasks } from "../db/schema";
import {
  type EnginePipelineEvent,
  type EnginePipelineRequest,
  type MediaEngine,
  readPipelineEvents,
} from "../engine";
import { ApiError } from "../errors/api-error";
import { checkTargets, targetResolver } from "../fetch/targets";
import { deleteFiles, storeFile } from "../files/store";
import { Timing } from "../http/timing";
import {
  apiErrorOf,
  callEngine,
  contentTypeOf,
  engineFailure,
  extensionOf,
} from "../operations/engine-runner";
import { checkTextMark, engineMarkSize, engineTextMark, textMarkOf } from "../operations/text-mark";
import { checkUploadSources, materializeSources } from "../uploads/source";
import type { StoredOutput, StoredStep } from "./serialize";

export const PIPELINE_TYPE = "pipeline";

type Step = PipelineParams["steps"][number];
type StepParams = { watermark_url?: string; watermark_upload_id?: string; text?: string };

/** A step's failure as the 400 of the task's request: the fields named under `params.steps[i]`. */
async function inStep<T>(i: number, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (!(error instanceof ApiError) || error.errors === undefined) throw error;
    const errors = error.errors.map((e) => ({
      ...e,
      field: `params.steps[${i}].${e.field.startsWith("params.") ? e.field : `params.${e.field}`}`,
    }));
    throw new ApiError(error.code, error.detail, { errors, headers: error.headers });
  }
}

const paramsOf = (step: Step) => OPERATIONS[step.type].params.parse(step.params ?? {}) as StepParams;

/**
 * What the run would refuse at once, refused at creation as for any task, each naming its step: a text mark no
 * font can draw, a watermark upload that is not a complete upload of the account, a watermark URL refused by
 * the source rules.
 */
export async function checkPipeline(
  env: Env,
  config: Config,
  accountId: string,
  steps: readonly Step[],
  now: number,
): Promise<void> {
  for (const [i, step] of steps.entries()) {
    const params = paramsOf(step);
    await inStep(i, async () => {
      await checkTextMark(env, params);
      await checkUploadSources(env, accountId, { watermarkUploadId: params.watermark_upload_id }, now);
      await checkTargets(
        { engine: targetResolver(env, config), dohUrl: config.dohUrl },
        config.allowPrivateSources,
        { watermarkUrl: params.watermark_url },
      );
    });
  }
}

/** The steps as a new task stores them: all queued. */
export const queuedSteps = (steps: readonly Step[]): StoredStep[] =>
  steps.map((step) => ({ name: step.name, type: step.type, status: "queued", result: null, error: null }));

/** The task's steps, outputs and earned credits as they stand; false when the task is no longer processing. */
async function record(db: Db, taskId: string, steps: StoredStep[], outputs: StoredOutput[], earned = 0) {
  const result = await db
    .update(tasks)
    .set({
      steps: JSON.stringify(steps),
      outputs: JSON.stringify(outputs),
      charged: sql`${tasks.charged} + ${earned}`,
    })
    .where(and(eq(tasks.id, taskId), eq(tasks.status, "processing")))
    .run();
  return result.meta.changes === 1;
}

export type PipelineServices = {
  env: Env;
  config: Config;
  db: Db;
  engine: MediaEngine;
  signal: AbortSignal;
  maxSourceBytes: number;
  timeoutMs: number;
};

export type PipelineOutcome =
  | { status: "succeeded"; outputs: StoredOutput[] }
  | { status: "canceled" }
  /** A step failed; `anySucceeded`: an earlier one succeeded (so the task cannot simply run again). */
  | { status: "failed"; error: ApiError; anySucceeded: boolean };

/** The engine's refusal of the whole request, its fields named as the task's request names them. */
function stepField(error: ApiError): ApiError {
  if (error.errors === undefined) return error;
  const errors = error.errors.map((e) => ({
    ...e,
    field: e.field.startsWith("steps[") ? `params.${e.field}` : e.field,
  }));
  return new ApiError(error.code, error.detail, { errors, headers: error.headers });
}

/**
 * Runs a pipeline task's steps on the engine and stores each step's output as its `succeeded` arrives. Throws
 * what fails before the engine runs it (its refusal, a source upload gone); a step's failure is the outcome.
 */
export async function runPipeline(task: TaskRow, svc: PipelineServices): Promise<PipelineOutcome> {
  const { env, config, engine, signal } = svc;
  const { steps } = PipelineParamsSchema.parse(JSON.parse(task.params));
  const outputs: StoredOutput[] = [];
  const materialize = (sourceUrl: string, params: unknown) =>
    materializeSources(env, config, {
      accountId: task.accountId,
      origin: task.origin,
      sourceUrl,
      params,
      jobMs: svc.timeoutMs,
      now: Date.now(),
    });
  const { sourceUrl } = await materialize(task.sourceUrl, {});
  const request: EnginePipelineRequest = {
    job_id: task.id,
    source_url: sourceUrl,
    max_source_bytes: svc.maxSourceBytes,
    timeout_ms: svc.timeoutMs,
    steps: await Promise.all(
      steps.map(async (step, i) => {
        // An upload named as a logo becomes a signed URL; a text mark is drawn here (the engine draws none).
        const { params } = await inStep(i, () => materialize(sourceUrl, step.params ?? {}));
        const mark = textMarkOf(paramsOf(step));
        const text_mark =
          mark && (await inStep(i, () => engineTextMark({ env }, mark, engineMarkSize(mark))));
        return {
          name: step.name,
          type: step.type,
          ...(step.use === undefined ? {} : { use: step.use }),
          params: params as Record<string, unknown>,
          ...(text_mark ? { text_mark } : {}),
        };
      }),
    ),
  };
  const ctx = { signal, timing: new Timing() };
  const response = await callEngine(ctx, () => engine.runPipeline(request, signal));
  if (!response.ok) throw stepField(await engineFailure(response));
  try {
    return await follow(svc, task, steps, response, outputs);
  } catch (error) {
    // After a step succeeded, any failure is the task's (it cannot run again without running that step twice).
    if (outputs.length === 0 || signal.aborted || !(error instanceof ApiError)) throw error;
    return { status: "failed", error, anySucceeded: true };
  }
}

/** Reads the pipeline's events to its end, storing and recording each step as it ends. */
async function follow(
  svc: PipelineServices,
  task: TaskRow,
  steps: readonly Step[],
  response: Response,
  outputs: StoredOutput[],
): Promise<PipelineOutcome> {
  const { env, db, signal } = svc;
  const state = queuedSteps(steps);
  const stepOf = (name: string) => steps.findIndex((s) => s.name === name);
  for await (const event of readPipelineEvents(response)) {
    if (event.event === "done") return { status: "succeeded", outputs };
    const i = stepOf(event.step);
    const step = steps[i]!;
    if (event.event === "started") {
      state[i] = { ...state[i]!, status: "running" };
      if (!(await record(db, task.id, state, outputs))) return { status: "canceled" };
      continue;
    }
    if (event.event === "failed") {
      const error = apiErrorOf(event.error);
      state[i] = { ...state[i]!, status: "failed", error: { code: error.code, message: error.detail } };
      await record(db, task.id, state, outputs);
      return { status: "failed", error, anySucceeded: outputs.length > 0 };
    }
    const output = await storeStep(svc, task, step, event);
    outputs.push(output.stored);
    state[i] = { ...state[i]!, status: "succeeded", result: output.result };
    if (!(await record(db, task.id, state, outputs, OPERATIONS[step.type].cost))) {
      // Canceled (or ended by its watchdog) meanwhile: this step's output is not delivered.
      await deleteFiles(db, env.FILES, [output.file], Date.now());
      return { status: "canceled" };
    }
  }
  // The stream ended without its last event: the engine went away (its abort reads as the task's signal).
  if (signal.aborted) throw signal.reason;
  throw new ApiError("INTERNAL", "The media engine stopped before the pipeline ended.");
}

type Succeeded = Extract<EnginePipelineEvent, { event: "succeeded" }>;

/** A succeeded step's output stored under the task: its file from the engine that ran it, or its data as JSON. */
async function storeStep(svc: PipelineServices, task: TaskRow, step: Step, event: Succeeded) {
  const spec = OPERATIONS[step.type as OperationType];
  const now = Date.now();
  const base = {
    accountId: task.accountId,
    requestId: task.requestId,
    taskId: task.id,
    expiresAt: now + svc.config.outputTtlMs,
    now,
  };
  if (spec.gives === "json") {
    const result = spec.result.parse(event.data) as Record<string, unknown>;
    const body = new TextEncoder().encode(JSON.stringify({ type: step.type, ...result }));
    const file = await storeFile(svc.db, svc.env.FILES, {
      ...base,
      name: `${step.name}.json`,
      contentType: "application/json",
      body,
      sizeBytes: body.byteLength,
    });
    const stored: StoredOutput = {
      format: "json",
      ...result,
      size_bytes: file.sizeBytes,
      kind: "json",
      file_id: file.id,
      name: file.name,
      step: step.name,
    };
    return { stored, result, file };
  }
  const result = spec.result.parse(event.file?.result) as Record<string, unknown> & {
    format: string;
    size_bytes: number;
  };
  const response = await callEngine({ signal: svc.signal, timing: new Timing() }, () =>
    svc.engine.pipelineFile(task.id, step.name, svc.signal),
  );
  if (!response.ok) throw await engineFailure(response);
  const file = await storeFile(svc.db, svc.env.FILES, {
    ...base,
    name: `${step.name}.${extensionOf(result.format)}`,
    contentType: contentTypeOf(result.format),
    body: response.body ?? new Uint8Array(),
    sizeBytes: result.size_bytes,
  });
  const stored: StoredOutput = {
    ...result,
    size_bytes: file.sizeBytes,
    kind: spec.gives,
    file_id: file.id,
    name: file.name,
    step: step.name,
  };
  return { stored, result, file };
}
