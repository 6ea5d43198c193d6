import { and, eq, inArray, sql } from "drizzle-orm";
import { ledgerEntry } from "../credits/ledger";
import type { Db } from "../db/client";
import { accounts, type TaskRow, tasks } from "../db/schema";
import type { StoredOutput } from "./serialize";

/** queued → processing. False when the task is no longer queued (canceled, or already started). */
export async function markProcessing(db: Db, taskId: string, now: number): Promise<boolean> {
  const result = await db
    .update(tasks)
    .set({ status: "processing", startedAt: now })
    .where(and(eq(tasks.id, taskId), eq(tasks.status, "queued")))
    .run();
  return result.meta.changes === 1;
}

/**
 * processing → queued: the engine had no capacity for the task (it answered 503 or could not be reached), so
 * the task waits again, visibly queued. False when it is no longer processing (canceled meanwhile).
 */
export async function markQueuedAgain(db: Db, taskId: string): Promise<boolean> {
  const result = await db
    .update(tasks)
    .set({ status: "queued", startedAt: null, progress: 0 })
    .where(and(eq(tasks.id, taskId), eq(tasks.status, "processing")))
    .run();
  return result.meta.changes === 1;
}

export async function setProgress(db: Db, taskId: string, progress: number) {
  await db
    .update(tasks)
    .set({ progress: Math.max(0, Math.min(1, progress)) })
    .where(and(eq(tasks.id, taskId), eq(tasks.status, "processing")));
}

export type Ending =
  | { status: "succeeded"; outputs: StoredOutput[] }
  | { status: "failed"; code: string; message: string; requestId: string }
  | { status: "canceled" };

/**
 * The one way a task ends. In one batch: the status change — only from queued/processing, so a terminal status
 * never changes and only one ending wins any race — then, for failed and canceled, the refund of the
 * reservation less what its succeeded steps earned (`cost - charged`: a pipeline's, read in the same
 * transaction, so a step recorded just before counts and one after is not recorded; all of it for other
 * tasks), written only when the status change happened (changes() = 1), when there is something to refund,
 * and at most once per task (the ledger's unique (task_id, kind) index). Returns the ended row, or null when
 * another ending won.
 * changes() after an UPDATE … RETURNING still counts the rows it changed (SQLite), so the refund's condition
 * holds as before.
 */
export async function endTask(db: Db, task: TaskRow, ending: Ending, retentionMs: number, now: number) {
  const from =
    ending.status === "succeeded" ? (["processing"] as const) : (["queued", "processing"] as const);
  const set: Partial<TaskRow> = { status: ending.status, completedAt: now, expiresAt: now + retentionMs };
  if (ending.status === "succeeded")
    Object.assign(set, { outputs: JSON.stringify(ending.outputs), progress: 1 });
  if (ending.status === "failed") {
    Object.assign(set, {
      errorCode: ending.code,
      errorMessage: ending.message,
      errorRequestId: ending.requestId,
    });
  }
  // RETURNING: the ended row comes back with the change (one round trip fewer before waiters are released).
  const update = db
    .update(tasks)
    .set(set)
    .where(and(eq(tasks.id, task.id), inArray(tasks.status, [...from])))
    .returning();
  if (ending.status === "succeeded") return (await update.all())[0] ?? null;
  const refund = sql<number>`(select ${tasks.cost} - ${tasks.charged} from ${tasks} where ${tasks.id} = ${task.id})`;
  const [ended] = await db.batch([
    update,
    db
      .update(accounts)
      .set({ credits: sql`${accounts.credits} + ${refund}` })
      .where(and(eq(accounts.id, task.accountId), sql`changes() = 1`, sql`${refund} > 0`)),
    ledgerEntry(db, {
      accountId: task.accountId,
      kind: "refund",
      amount: refund,
      taskId: task.id,
      requestId: task.requestId,
      reason: `task ${ending.status}`,
      now,
    }),
  ]);
  return ended[0] ?? null;
}

export async function loadTask(db: Db, taskId: string) {
  return db.select().from(tasks).where(eq(tasks.id, taskId)).get();
}
