import { and, desc, eq, lt, type SQL, sql } from "drizzle-orm";
import { ulid } from "ulid";
import type { Db } from "../db/client";
import { accounts, creditLedger } from "../db/schema";
import { ApiError } from "../errors/api-error";

export type LedgerKind = "grant" | "charge" | "reserve" | "refund";

export type BalanceChange = {
  accountId: string;
  kind: LedgerKind;
  /** Signed: negative takes credits away. */
  amount: number;
  taskId?: string | null;
  requestId?: string | null;
  reason?: string | null;
  now: number;
};

/**
 * The ledger row of a balance change, for a batch right after the statement that changed the balance: it is
 * inserted only when that statement changed the account (changes() = 1), and records the resulting balance.
 */
export function ledgerEntry(db: Db, change: Omit<BalanceChange, "amount"> & { amount: number | SQL }) {
  const value = <T>(v: T, column: string) => sql<T>`${v}`.as(column);
  return db.insert(creditLedger).select(
    db
      .select({
        id: value(ulid(change.now), "id"),
        accountId: accounts.id,
        kind: value(change.kind, "kind"),
        amount: value(change.amount, "amount"),
        balanceAfter: accounts.credits,
        taskId: value(change.taskId ?? null, "task_id"),
        requestId: value(change.requestId ?? null, "request_id"),
        reason: value(change.reason ?? null, "reason"),
        createdAt: value(change.now, "created_at"),
      })
      .from(accounts)
      .where(and(eq(accounts.id, change.accountId), sql`changes() = 1`)),
  );
}

/**
 * The two statements of a balance change, for one batch (a D1 transaction): the conditional update — it
 * changes nothing when the balance would go negative — and its ledger row. Concurrency cannot make a balance
 * negative.
 */
export function balanceChangeStatements(db: Db, change: BalanceChange) {
  return [
    db
      .update(accounts)
      .set({ credits: sql`${accounts.credits} + ${change.amount}` })
      .where(and(eq(accounts.id, change.accountId), sql`${accounts.credits} + ${change.amount} >= 0`)),
    ledgerEntry(db, change),
  ] as const;
}

/** The 402 of a balance change that did not apply (`balanceChangeStatements`' update changed nothing). */
export function balanceTooLow(change: BalanceChange) {
  return new ApiError(
    "INSUFFICIENT_CREDITS",
    `This operation costs ${-change.amount} credits; the balance is lower.`,
  );
}

/** Applies one balance change; returns the new balance or throws 402 when credits are short. */
export async function applyBalanceChange(db: Db, change: BalanceChange): Promise<number> {
  const [update] = await db.batch(balanceChangeStatements(db, change));
  if (update.meta.changes !== 1) throw balanceTooLow(change);
  const row = await db
    .select({ credits: accounts.credits })
    .from(accounts)
    .where(eq(accounts.id, change.accountId))
    .get();
  return row?.credits ?? 0;
}

export async function listLedger(db: Db, accountId: string, page: { beforeId?: string; limit: number }) {
  const rows = await db
    .select()
    .from(creditLedger)
    .where(
      and(
        eq(creditLedger.accountId, accountId),
        page.beforeId ? lt(creditLedger.id, page.beforeId) : undefined,
      ),
    )
    .orderBy(desc(creditLedger.id))
    .limit(page.limit + 1)
    .all();
  const hasNext = rows.length > page.limit;
  return { rows: hasNext ? rows.slice(0, page.limit) : rows, hasNext };
}
