import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * Asynchronous tasks. The id is a monotonic ULID, so ordering by id is ordering by creation
 * and serves as the keyset for pagination.
 */
export const tasks = sqliteTable(
  "tasks",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    type: text("type").notNull(),
    status: text("status", { enum: ["queued", "processing", "succeeded", "failed", "canceled"] }).notNull(),
    source: text("source").notNull().default("api"),
    sourceUrl: text("source_url").notNull(),
    /** The operation's params as JSON. */
    params: text("params").notNull().default("{}"),
    webhookUrl: text("webhook_url"),
    /** JSON array of event names, or null for the default (completed, failed). */
    webhookEvents: text("webhook_events"),
    idempotencyKey: text("idempotency_key"),
    requestId: text("request_id").notNull(),
    /** Origin of the API at creation: the base of the task's absolute URLs (urls, outputs, webhook body). */
    origin: text("origin").notNull().default(""),
    /** Credits reserved at creation. */
    cost: integer("cost").notNull(),
    /**
     * Of `cost`, what the steps that succeeded so far have earned (pipelines; 0 otherwise): a failed or canceled
     * task is refunded `cost - charged` (transitions.ts endTask).
     */
    charged: integer("charged").notNull().default(0),
    progress: real("progress").notNull().default(0),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    errorRequestId: text("error_request_id"),
    /** JSON array of {kind, file_id, name, ...} as stored; URLs are signed when read. */
    outputs: text("outputs").notNull().default("[]"),
    /** Pipelines: JSON array of each step's state (src/tasks/pipeline.ts StoredStep); null for other tasks. */
    steps: text("steps"),
    dataRemoved: integer("data_removed", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull(),
    startedAt: integer("started_at"),
    completedAt: integer("completed_at"),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [
    index("tasks_account_idx").on(t.accountId, t.id),
    index("tasks_account_status_idx").on(t.accountId, t.status, t.id),
    uniqueIndex("tasks_account_idempotency_idx").on(t.accountId, t.idempotencyKey),
  ],
);

export type TaskRow = typeof tasks.$inferSelect;
export type TaskStatus = TaskRow["status"];
