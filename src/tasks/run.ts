import type { Config } from "../config/config";
import type { Db } from "../db/client";
import type { TaskRow } from "../db/schema";
import type { MediaEngine } from "../engine";
import { ApiError } from "../errors/api-error";
import { storeFile } from "../files/store";
import { Timing } from "../http/timing";
import { getOperation } from "../operations";
import { withBudget } from "../operations/budget";
import { materializeSources } from "../uploads/source";
import { PIPELINE_TYPE, runPipeline } from "./pipeline";
import type { StoredOutput } from "./serialize";
import { type Ending, setProgress } from "./transitions";

/** Tasks take sources up to 4 GiB (decisions.md §9). */
export const TASK_MAX_SOURCE_BYTES = 4 * 1024 * 1024 * 1024;
const PROGRESS_EVERY_MS = 2000;

/** How a run came out: an ending, or no capacity in the engine (the task waits and runs again later). */
export type RunOutcome = Ending | { status: "wait"; reason: string };

export type TaskRunServices = {
  env: Env;
  config: Config;
  db: Db;
  engine: MediaEngine;
  signal: AbortSignal;
  /** What is left of the processing budget (default: all of it). */
  budgetMs?: number;
};

/**
 * Runs one task's operation within the processing budget and stores its output under the task. Returns how
 * the task should end; never throws for the task's own failures (they become `failed` with a public code).
 */
export async function runTask(task: TaskRow, svc: TaskRunServices): Promise<RunOutcome> {
  if (task.type === PIPELINE_TYPE) return runPipelineTask(task, svc);
  const operation = getOperation(task.type);
  if (!operation) return failed(task, new ApiError("INTERNAL", `Unknown task type ${task.type}.`));
  const progress = pollProgress(task, svc);
  try {
    const produced = await withBudget(svc.budgetMs ?? svc.config.taskBudgetMs, async (budget) => {
      const signal = AbortSignal.any([budget, svc.signal]);
      // An upload source (stored as upload:<id>) checked again and signed for the engine for this run.
      const { sourceUrl, params } = await materializeSources(svc.env, svc.config, {
        accountId: task.accountId,
        origin: task.origin,
        sourceUrl: task.sourceUrl,
        params: operation.params.parse(JSON.parse(task.params)),
        jobMs: svc.config.taskBudgetMs,
        now: Date.now(),
      });
      return operation.run(
        {
          env: svc.env,
          config: svc.config,
          engine: svc.engine,
          jobId: task.id,
          signal,
          timing: new Timing(),
          maxSourceBytes: TASK_MAX_SOURCE_BYTES,
          timeoutMs: svc.config.taskBudgetMs,
          priority: "low",
        },
        sourceUrl,
        params as never,
      );
    });
    const now = Date.now();
    const file =
      produced.kind === "file"
        ? { ...produced, kind: produced.outputKind }
        : {
            kind: "json" as const,
            name: "probe.json",
            contentType: "application/json",
            body: new TextEncoder().encode(JSON.stringify({ type: task.type, ...produced.data })),
            meta: { format: "json", ...produced.data },
          };
    const bytes =
      file.body instanceof Uint8Array ? file.body.byteLength : (produced as { sizeBytes: number }).sizeBytes;
    const stored = await storeFile(svc.db, svc.env.FILES, {
      accountId: task.accountId,
      requestId: task.requestId,
      taskId: task.id,
      name: file.name,
      contentType: file.contentType,
      body: file.body,
      sizeBytes: bytes,
      // Outputs live as long as the task's results: completed_at + retention (the alarm deletes them then).
      expiresAt: now + svc.config.outputTtlMs,
      now,
    });
    const output: StoredOutput = {
      ...file.meta,
      size_bytes: stored.sizeBytes,
      kind: file.kind,
      file_id: stored.id,
      name: stored.name,
    };
    return { status: "succeeded", outputs: [output] };
  } catch (error) {
    if (svc.signal.aborted) return { status: "canceled" };
    return failed(task, error);
  } finally {
    clearInterval(progress);
  }
}

/**
 * A pipeline (src/tasks/pipeline.ts) within the processing budget. A step that fails ends the task failed
 * with its error; the engine without capacity before any step succeeded is a wait, as for any task.
 */
async function runPipelineTask(task: TaskRow, svc: TaskRunServices): Promise<RunOutcome> {
  const progress = pollProgress(task, svc);
  const budgetMs = svc.budgetMs ?? svc.config.taskBudgetMs;
  try {
    const outcome = await withBudget(budgetMs, (budget) =>
      runPipeline(task, {
        env: svc.env,
        config: svc.config,
        db: svc.db,
        engine: svc.engine,
        signal: AbortSignal.any([budget, svc.signal]),
        maxSourceBytes: TASK_MAX_SOURCE_BYTES,
        timeoutMs: budgetMs,
      }),
    );
    if (outcome.status !== "failed") return outcome;
    if (outcome.anySucceeded && outcome.error.code === "SERVICE_UNAVAILABLE") {
      return {
        status: "failed",
        code: outcome.error.code,
        message: outcome.error.detail,
        requestId: task.requestId,
      };
    }
    return failed(task, outcome.error);
  } catch (error) {
    if (svc.signal.aborted) return { status: "canceled" };
    return failed(task, error);
  } finally {
    clearInterval(progress);
  }
}

/** The engine's progress of the task's job, copied to the task every PROGRESS_EVERY_MS; clear it when done. */
function pollProgress(task: TaskRow, svc: TaskRunServices) {
  return setInterval(() => {
    svc.engine
      .progress(task.id)
      .then((p) => (p === null ? undefined : setProgress(svc.db, task.id, p)))
      .catch(() => {});
  }, PROGRESS_EVERY_MS);
}

function failed(task: TaskRow, error: unknown): RunOutcome {
  if (error instanceof ApiError) {
    // The engine saturated, starting, restarting or unreachable is not the task's fault: it waits and runs
    // again (the runner bounds the wait). Nothing was produced, so running it again is not running it twice.
    if (error.code === "SERVICE_UNAVAILABLE") return { status: "wait", reason: error.detail };
    return { status: "failed", code: error.code, message: error.detail, requestId: task.requestId };
  }
  console.error(JSON.stringify({ level: "error", task_id: task.id, error: String(error) }));
  return {
    status: "failed",
    code: "INTERNAL",
    message: "An internal error occurred.",
    requestId: task.requestId,
  };
}
