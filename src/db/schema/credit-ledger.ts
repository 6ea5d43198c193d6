import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * Append-only ledger. Every balance change writes one row in the same batch as the balance update.
 * kind: grant (operator), charge (synchronous success), reserve (task creation), refund (task failed or
 * canceled). A task has at most one row of each kind: the unique index makes a second charge impossible.
 */
export const creditLedger = sqliteTable(
  "credit_ledger",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    kind: text("kind", { enum: ["grant", "charge", "reserve", "refund"] }).notNull(),
    /** Signed change of the balance: negative for charge/reserve. */
    amount: integer("amount").notNull(),
    balanceAfter: integer("balance_after").notNull(),
    taskId: text("task_id"),
    requestId: text("request_id"),
    reason: text("reason"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    index("credit_ledger_account_idx").on(t.accountId, t.id),
    uniqueIndex("credit_ledger_task_kind_idx").on(t.taskId, t.kind),
  ],
);

export type LedgerRow = typeof creditLedger.$inferSelect;
