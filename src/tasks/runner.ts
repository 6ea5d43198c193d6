import { DurableObject } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { acquireSlot, releaseSlot } from "../capacity/slots";
import { ENGINE_RETRY_AFTER_SECONDS } from "../capacity/unavailable";
import { type Config, getConfig } from "../config/config";
import { createDb, type Db } from "../db/client";
import { files, type TaskRow, tasks } from "../db/schema";
import type { MediaEngine } from "../engine";
import { deleteFiles } from "../files/store";
import { engineFor } from "../operations/engine";
import { notifyEnded, notifyStarted } from "./notify";
import { PIPELINE_TYPE } from "./pipeline";
import { runTask } from "./run";
import { type Ending, endTask, loadTask, markProcessing, markQueuedAgain } from "./transitions";

type State =
  /**
   * Waiting for its (next) run; `waits` and `waitingSince` count the times the engine had no capacity (or
   * another transient 503 met the run: a font the FONTS bucket cannot give); `reason`: the last such 503's.
   */
  | { phase: "scheduled"; taskId: string; waits?: number; waitingSince?: number; reason?: string }
  /** `deadline`: startedAt + the processing budget; the watchdog alarm is set for it. */
  | { phase: "running"; taskId: string; startedAt: number; deadline?: number }
  | { phase: "ended"; taskId: string; expiresAt: number }
  | { phase: "removed"; taskId: string };

const TERMINAL: ReadonlySet<string> = new Set(["succeeded", "failed", "canceled"]);

/** Longest wait between two tries when the engine has no capacity (tries double from Retry-After up to this). */
const MAX_WAIT_STEP_MS = 30_000;

/**
 * One object per task, the only place a task runs. `start` is idempotent (a redelivered queue message finds the
 * state and does nothing), so a task never runs twice. The alarm runs the work.
 *
 * Capacity: when the account holds its whole share of engine slots, or the engine answers 503 (saturated,
 * starting, unreachable), the task goes back to `queued` and the alarm tries again with backoff, for at most
 * TASK_MAX_QUEUE_WAIT_SECONDS; only then does it fail (SERVICE_UNAVAILABLE, refunded).
 *
 * The watchdog owns the verdict on time: a run sets the alarm for its deadline (start + budget). Should the run
 * die with its alarm handler (an alarm's wall time is 15 min in production, the default budget too), the
 * retried alarm finds `running` and ends the task PROCESSING_TIMEOUT past the deadline, INTERNAL before it
 * (the run stopped for another reason), refunded either way. After the task ends, the alarm fires again at
 * expires_at and deletes its outputs.
 */
export class TaskRunner extends DurableObject<Env> {
  private controller: AbortController | undefined;
  /** Requests held until the task ends (`Prefer: wait`): woken by its ending, kept in memory only. */
  private readonly waiters = new Set<(task?: TaskRow) => void>();
  /** Test seam: an engine to use instead of the configured one. */
  engineOverride: MediaEngine | undefined;

  private get state() {
    return this.ctx.storage.kv.get<State>("state");
  }

  private set state(state: State | undefined) {
    if (state) this.ctx.storage.kv.put("state", state);
  }

  private engine(config: Config) {
    // Tasks queue in an engine only while its queue is less than half full; else 503 → they wait here.
    return this.engineOverride ?? engineFor(this.env, config, { priority: "low" });
  }

  async start(taskId: string): Promise<"scheduled" | "already"> {
    if (this.state) return "already";
    this.state = { phase: "scheduled", taskId };
    await this.ctx.storage.setAlarm(Date.now());
    return "scheduled";
  }

  /**
   * Resolves as soon as the task has ended (succeeded, failed or canceled; with its row when the runner ended
   * it), or `ended: false` after `timeoutMs`.
   * The ending pushes it (`wake`, called right after the row's terminal transition): no polling. A task that
   * ended somewhere else (the dead-letter handler) is seen in D1 once the waiter is registered.
   */
  async waitForEnd(taskId: string, timeoutMs: number): Promise<{ ended: boolean; task?: TaskRow }> {
    const phase = this.state?.phase;
    if (phase === "ended" || phase === "removed") return { ended: true };
    return new Promise((resolve) => {
      const done = (ended: boolean, task?: TaskRow) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve({ ended, ...(task ? { task } : {}) });
      };
      const wake = (task?: TaskRow) => done(true, task);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(wake);
      loadTask(createDb(this.env.DB), taskId)
        .then((task) => {
          if (task && TERMINAL.has(task.status)) wake();
        })
        .catch(() => {});
    });
  }

  /** Releases the held requests; `task` is the ended row when the caller has it (saves them a D1 read). */
  private wake(task?: TaskRow) {
    for (const wake of [...this.waiters]) wake(task);
  }

  /** Aborts the work if it runs here; the cancel route has already ended the task (and refunded). */
  async cancel(): Promise<void> {
    this.wake();
    this.controller?.abort(new Error("canceled"));
    const state = this.state;
    if (state?.phase === "running" || state?.phase === "scheduled") {
      const config = getConfig(this.env);
      await Promise.resolve()
        .then(() => this.engine(config).abort(state.taskId))
        .catch(() => {});
    }
  }

  override async alarm(): Promise<void> {
    const state = this.state;
    if (!state) return;
    const db = createDb(this.env.DB);
    if (state.phase === "scheduled") return this.run(state);
    if (state.phase === "running") return this.watchdog(db, state);
    if (state.phase === "ended") {
      if (Date.now() < state.expiresAt) return void (await this.ctx.storage.setAlarm(state.expiresAt));
      const outputs = await db
        .select({ id: files.id, r2Key: files.r2Key })
        .from(files)
        .where(eq(files.taskId, state.taskId))
        .all();
      await deleteFiles(db, this.env.FILES, outputs, Date.now());
      await db.update(tasks).set({ dataRemoved: true, outputs: "[]" }).where(eq(tasks.id, state.taskId));
      this.state = { phase: "removed", taskId: state.taskId };
    }
  }

  /** The alarm found `running`: the run died without ending the task. The watchdog gives the verdict. */
  private async watchdog(db: Db, state: Extract<State, { phase: "running" }>) {
    const config = getConfig(this.env);
    const deadline = state.deadline ?? state.startedAt + config.taskBudgetMs;
    const timedOut = Date.now() >= deadline;
    this.controller?.abort(new Error(timedOut ? "budget exceeded" : "run stopped"));
    const task = await loadTask(db, state.taskId);
    if (!task) return;
    // Kill the engine job, if it still runs, and free the account's slot.
    await Promise.resolve()
      .then(() => this.engine(config).abort(task.id))
      .catch(() => {});
    await releaseSlot(this.env, task.accountId, task.id).catch(() => {});
    const ending: Ending = timedOut
      ? {
          status: "failed",
          code: "PROCESSING_TIMEOUT",
          message: `The task exceeded its processing budget of ${Math.round(config.taskBudgetMs / 1000)} s.`,
          requestId: task.requestId,
        }
      : {
          status: "failed",
          code: "INTERNAL",
          message: "The task's processing stopped unexpectedly.",
          requestId: task.requestId,
        };
    await this.end(db, config, task, ending);
  }

  private async run(state: Extract<State, { phase: "scheduled" }>) {
    const { taskId } = state;
    const config = getConfig(this.env);
    const db = createDb(this.env.DB);
    const task = await loadTask(db, taskId);
    if (task?.status !== "queued") {
      // Canceled while queued (or unknown): nothing to run.
      return this.afterEnd(taskId, task?.expiresAt ?? Date.now());
    }
    // The account's share of the engine first: over it, the task waits without touching the engine.
    const grant = await acquireSlot(this.env, config, task.accountId, taskId, config.taskBudgetMs);
    if (!grant.granted) return this.wait(db, config, state, task, grant.retryAfterSeconds);
    const now = Date.now();
    const deadline = now + config.taskBudgetMs;
    this.state = { phase: "running", taskId, startedAt: now, deadline };
    // Watchdog: should this run die, the alarm fires at the deadline and ends the task (see `watchdog`).
    await this.ctx.storage.setAlarm(deadline);
    try {
      if (!(await markProcessing(db, taskId, now))) return this.afterEnd(taskId, task.expiresAt);
      await notifyStarted(this.env, db, { ...task, status: "processing", startedAt: now }).catch(
        (error: unknown) => {
          console.error(
            JSON.stringify({ level: "error", task_id: taskId, webhook: "started", error: String(error) }),
          );
        },
      );
      this.controller = new AbortController();
      const outcome = await Promise.resolve()
        .then(() =>
          runTask(
            { ...task, status: "processing", startedAt: now },
            {
              env: this.env,
              config,
              db,
              engine: this.engine(config),
              signal: (this.controller as AbortController).signal,
              budgetMs: deadline - now,
            },
          ),
        )
        .catch((error: unknown) => ({ status: "wait" as const, reason: String(error) }));
      this.controller = undefined;
      if (outcome.status === "wait") {
        if (await markQueuedAgain(db, taskId)) {
          return this.wait(db, config, state, task, ENGINE_RETRY_AFTER_SECONDS, outcome.reason);
        }
        // Canceled while it ran: the cancel already ended it.
        return this.afterEnd(taskId, (await loadTask(db, taskId))?.expiresAt ?? Date.now());
      }
      await this.end(db, config, task, outcome);
    } finally {
      await releaseSlot(this.env, task.accountId, taskId).catch(() => {});
    }
  }

  /**
   * No capacity now: the task stays queued and the alarm tries again, waiting from Retry-After doubling up to
   * MAX_WAIT_STEP_MS (jittered, so a burst does not come back at once), for TASK_MAX_QUEUE_WAIT_SECONDS at most.
   */
  private async wait(
    db: Db,
    config: Config,
    state: Extract<State, { phase: "scheduled" }>,
    task: TaskRow,
    retryAfterSeconds: number,
    reason?: string,
  ) {
    const now = Date.now();
    const waitingSince = state.waitingSince ?? now;
    if (now - waitingSince >= config.taskMaxQueueWaitMs) {
      const minutes = Math.round(config.taskMaxQueueWaitMs / 60_000);
      return this.end(db, config, task, {
        status: "failed",
        code: "SERVICE_UNAVAILABLE",
        message:
          state.reason === undefined
            ? `The media engine had no capacity for this task for ${minutes} min.`
            : `The task could not run for ${minutes} min: ${state.reason}`,
        requestId: task.requestId,
      });
    }
    const waits = (state.waits ?? 0) + 1;
    const step = Math.min(MAX_WAIT_STEP_MS, retryAfterSeconds * 1000 * 2 ** Math.min(waits - 1, 5));
    const delay = Math.round(step * (0.75 + Math.random() * 0.5));
    this.state = { phase: "scheduled", taskId: task.id, waits, waitingSince, ...(reason ? { reason } : {}) };
    await this.ctx.storage.setAlarm(now + delay);
  }

  private async end(db: Db, config: Config, task: TaskRow, ending: Ending) {
    const ended = await endTask(db, task, ending, config.outputTtlMs, Date.now());
    this.wake(ended ?? undefined);
    if (!ended && ending.status === "succeeded" && task.type !== PIPELINE_TYPE) {
      // Canceled while the work finished: its outputs are not delivered. (A pipeline's were, step by step, each
      // with its charge: they stay, src/tasks/pipeline.ts.)
      const ids = ending.outputs.map((o) => o.file_id);
      const rows = await db
        .select({ id: files.id, r2Key: files.r2Key })
        .from(files)
        .where(eq(files.taskId, task.id))
        .all();
      await deleteFiles(
        db,
        this.env.FILES,
        rows.filter((r) => ids.includes(r.id)),
        Date.now(),
      );
    }
    if (ended) await notifyEnded(this.env, db, ended);
    const final = ended ?? (await loadTask(db, task.id));
    return this.afterEnd(task.id, final?.expiresAt ?? Date.now());
  }

  private async afterEnd(taskId: string, expiresAt: number) {
    this.state = { phase: "ended", taskId, expiresAt };
    this.wake();
    await this.ctx.storage.setAlarm(expiresAt);
  }
}
