import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

export type UsageRow = { date: string; operation: string; count: number; credits: number };

/**
 * An account's billed work per UTC day and operation, from the credit ledger (the record of every charge):
 * a synchronous operation counts on the day it was charged; a task on the day it was created (its
 * reservation), unless it was refunded (failed or canceled: nothing was spent). `fromMs` inclusive, `toMs`
 * exclusive. The ledger's `reason` holds the operation type on charge and reserve rows.
 */
export async function usageByDay(
  db: Db,
  accountId: string,
  fromMs: number,
  toMs: number,
): Promise<UsageRow[]> {
  const rows = await db.all<{ date: string; operation: string; count: number; credits: number }>(sql`
    SELECT date(l.created_at / 1000, 'unixepoch') AS date, l.reason AS operation,
           count(*) AS count, -sum(l.amount) AS credits
    FROM credit_ledger l
    WHERE l.account_id = ${accountId}
      AND l.kind IN ('charge', 'reserve')
      AND l.created_at >= ${fromMs} AND l.created_at < ${toMs}
      AND NOT (l.kind = 'reserve' AND EXISTS (
        SELECT 1 FROM credit_ledger r WHERE r.task_id = l.task_id AND r.kind = 'refund'))
    GROUP BY date, operation
    ORDER BY date, operation`);
  return rows.map((r) => ({
    date: r.date,
    operation: r.operation,
    count: Number(r.count),
    credits: Number(r.credits),
  }));
}
