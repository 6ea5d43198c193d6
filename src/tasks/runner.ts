import { DurableObject } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { getConfig } from "../config/config";
import { createDb } from "../db/client";
import { files, tasks } from "../db/schema";
import type { MediaEngine } from "../engine";
import { deleteFiles } from "../files/store";
import { engineFor } from "../operations/engine";
import { notifyEnded } from "./notify";
import { runTask } from "./run";
import { endTask, loadTask, markProcessing } from "./transitions";

type State =
  | { phase: "scheduled"; taskId: string }
  | { phase: "running"; taskId: string; startedAt: number }
  | { phase: "ended"; taskId: string; expiresAt: number }
  | { phase: "removed"; taskId: string };

/**
 * One object per task, the only place a task runs. `start` is idempotent (a redelivered queue message finds the
 * state and does nothing), so a task never runs twice. The alarm runs the work; if the object dies mid-run
 * (engine gone, eviction), the retried alarm finds `running` and fails the task with INTERNAL (refunded), and
 * the processing budget inside the run fails it with PROCESSING_TIMEOUT: no task stays processing. After the
 * task ends, the alarm fires again at expires_at and deletes its outputs.
 */
export class TaskRunner extends DurableObject<Env> {
  private controller: AbortController | undefined;
  /** Test seam: an engine to use instead of the configured one. */
  engineOverride: MediaEngine | undefined;

  private get state() {
    return this.ctx.storage.kv.get<State>("state");
  }

  private set state(state: State | undefined) {
    if (state) this.ctx.storage.kv.put("state", state);
  }

  async start(taskId: string): Promise<"scheduled" | "already"> {
    if (this.state) return "already";
    this.state = { phase: "scheduled", taskId };
    await this.ctx.storage.setAlarm(Date.now());
    return "scheduled";
  }

  /** Aborts the work if it runs here; the cancel route has already ended the task (and refunded). */
  async cancel(): Promise<void> {
    this.controller?.abort(new Error("canceled"));
    const state = this.state;
    if (state?.phase === "running" || state?.phase === "scheduled") {
      const config = getConfig(this.env);
      await (this.engineOverride ?? engineFor(this.env, config)).abort(state.taskId).catch(() => {});
    }
  }

  override async alarm(): Promise<void> {
    const state = this.state;
    if (!state) return;
    const config = getConfig(this.env);
    const db = createDb(this.env.DB);
    if (state.phase === "scheduled") return this.run(state.taskId);
    if (state.phase === "running") {
      // The previous run died without ending the task.
      const task = await loadTask(db, state.taskId);
      if (task) {
        const ended = await endTask(
          db,
          task,
          {
            status: "failed",
            code: "INTERNAL",
            message: "The task's processing stopped unexpectedly.",
            requestId: task.requestId,
          },
          config.outputTtlMs,
          Date.now(),
        );
        if (ended) await notifyEnded(this.env, db, ended);
        return this.afterEnd(state.taskId, ended?.expiresAt ?? task.expiresAt);
      }
      return;
    }
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

  private async run(taskId: string) {
    const config = getConfig(this.env);
    const db = createDb(this.env.DB);
    const now = Date.now();
    this.state = { phase: "running", taskId, startedAt: now };
    // Watchdog: should this run die, the alarm fires after the budget and fails the task.
    await this.ctx.storage.setAlarm(now + config.taskBudgetMs + 60_000);
    const task = await loadTask(db, taskId);
    if (!task || !(await markProcessing(db, taskId, now))) {
      // Canceled while queued (or unknown): nothing to run.
      return this.afterEnd(taskId, task?.expiresAt ?? now);
    }
    this.controller = new AbortController();
    const engine = this.engineOverride ?? engineFor(this.env, config);
    const ending = await runTask(
      { ...task, status: "processing", startedAt: now },
      {
        env: this.env,
        config,
        db,
        engine,
        signal: this.controller.signal,
      },
    );
    this.controller = undefined;
    const ended = await endTask(db, task, ending, config.outputTtlMs, Date.now());
    if (!ended && ending.status === "succeeded") {
      // Canceled while the work finished: its outputs are not delivered.
      const ids = ending.outputs.map((o) => o.file_id);
      const rows = await db
        .select({ id: files.id, r2Key: files.r2Key })
        .from(files)
        .where(eq(files.taskId, taskId))
        .all();
      await deleteFiles(
        db,
        this.env.FILES,
        rows.filter((r) => ids.includes(r.id)),
        Date.now(),
      );
    }
    if (ended) await notifyEnded(this.env, db, ended);
    const final = ended ?? (await loadTask(db, taskId));
    return this.afterEnd(taskId, final?.expiresAt ?? Date.now());
  }

  private async afterEnd(taskId: string, expiresAt: number) {
    this.state = { phase: "ended", taskId, expiresAt };
    await this.ctx.storage.setAlarm(expiresAt);
  }
}
