import { and, eq, sql } from "drizzle-orm";
import { monotonicFactory } from "ulid";
import { ledgerEntry } from "../credits/ledger";
import type { Db } from "../db/client";
import { accounts, type TaskRow, tasks } from "../db/schema";
import { ApiError } from "../errors/api-error";

const nextId = monotonicFactory();

export type NewTask = {
  accountId: string;
  type: string;
  cost: number;
  sourceUrl: string;
  params: unknown;
  /** A pipeline's steps as they start (all queued): src/tasks/pipeline.ts. */
  steps?: unknown[];
  webhookUrl: string | null;
  webhookEvents: string[] | null;
  idempotencyKey: string | null;
  requestId: string;
  origin: string;
  retentionMs: number;
  now: number;
};

/**
 * Creates a task and reserves its cost in one transaction (a D1 batch): the row (skipped when the account
 * already has a task with this idempotency_key), the balance update (only when the row was inserted; the
 * accounts CHECK constraint aborts the whole batch if it would go negative) and the `reserve` ledger row.
 * Returns the new task, or the original one for a repeated idempotency_key.
 */
export async function createTask(db: Db, input: NewTask): Promise<{ task: TaskRow; created: boolean }> {
  const row: TaskRow = {
    id: nextId(input.now),
    accountId: input.accountId,
    type: input.type,
    status: "queued",
    source: "api",
    sourceUrl: input.sourceUrl,
    params: JSON.stringify(input.params ?? {}),
    webhookUrl: input.webhookUrl,
    webhookEvents: input.webhookEvents ? JSON.stringify(input.webhookEvents) : null,
    idempotencyKey: input.idempotencyKey,
    requestId: input.requestId,
    origin: input.origin,
    cost: input.cost,
    charged: 0,
    steps: input.steps === undefined ? null : JSON.stringify(input.steps),
    progress: 0,
    errorCode: null,
    errorMessage: null,
    errorRequestId: null,
    outputs: "[]",
    dataRemoved: false,
    createdAt: input.now,
    startedAt: null,
    completedAt: null,
    expiresAt: input.now + input.retentionMs,
  };
  try {
    const [inserted] = await db.batch([
      db.insert(tasks).values(row).onConflictDoNothing(),
      db
        .update(accounts)
        .set({ credits: sql`${accounts.credits} - ${input.cost}` })
        .where(and(eq(accounts.id, input.accountId), sql`changes() = 1`)),
      ledgerEntry(db, {
        accountId: input.accountId,
        kind: "reserve",
        amount: -input.cost,
        taskId: row.id,
        requestId: input.requestId,
        reason: input.type,
        now: input.now,
      }),
    ]);
    if (inserted.meta.changes === 1) return { task: row, created: true };
  } catch (error) {
    if (/CHECK constraint failed/i.test(String((error as Error)?.message))) {
      throw new ApiError(
        "INSUFFICIENT_CREDITS",
        `A ${input.type} task costs ${input.cost} credit${input.cost === 1 ? "" : "s"}; the balance is lower.`,
      );
    }
    throw error;
  }
  const original = await db
    .select()
    .from(tasks)
    .where(and(eq(tasks.accountId, input.accountId), eq(tasks.idempotencyKey, input.idempotencyKey ?? "")))
    .get();
  if (!original) throw new Error("task insert skipped without an idempotency conflict");
  return { task: original, created: false };
}
