import { and, eq, gte, inArray, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { creditLedger, tasks } from "../db/schema";

export type Usage = { operation: string; credits: number; count: number };

/** The first instant of the UTC month of `now`. */
export function monthStart(now: number) {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/**
 * Credits spent per operation since `since`, from the ledger: charges (synchronous operations) and task
 * reservations, each recorded with the operation's type as its reason, less the refunds of failed tasks.
 */
export async function usageSince(db: Db, accountId: string, since: number): Promise<Usage[]> {
  const [spent, refunded] = await Promise.all([
    db
      .select({
        operation: sql<string>`coalesce(${creditLedger.reason}, 'other')`,
        credits: sql<number>`-sum(${creditLedger.amount})`,
        count: sql<number>`count(*)`,
      })
      .from(creditLedger)
      .where(
        and(
          eq(creditLedger.accountId, accountId),
          inArray(creditLedger.kind, ["charge", "reserve"]),
          gte(creditLedger.createdAt, since),
        ),
      )
      .groupBy(creditLedger.reason)
      .all(),
    db
      .select({ operation: tasks.type, credits: sql<number>`sum(${creditLedger.amount})` })
      .from(creditLedger)
      .innerJoin(tasks, eq(tasks.id, creditLedger.taskId))
      .where(
        and(
          eq(creditLedger.accountId, accountId),
          eq(creditLedger.kind, "refund"),
          gte(creditLedger.createdAt, since),
        ),
      )
      .groupBy(tasks.type)
      .all(),
  ]);
  const refunds = new Map(refunded.map((r) => [r.operation, r.credits]));
  return spent
    .map((row) => ({ ...row, credits: Math.max(0, row.credits - (refunds.get(row.operation) ?? 0)) }))
    .sort((a, b) => b.credits - a.credits || a.operation.localeCompare(b.operation));
}
