import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { tasks } from "./tasks";

/** One webhook message (one event of one task); `id` is the webhook-id (msg_<ULID>), the same on every attempt. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id),
    accountId: text("account_id").notNull(),
    event: text("event").notNull(),
    url: text("url").notNull(),
    /** The signed body, fixed at the event so every attempt sends the same task snapshot. */
    body: text("body").notNull(),
    status: text("status", { enum: ["pending", "delivered", "dead"] }).notNull(),
    attemptCount: integer("attempt_count").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at"),
    createdAt: integer("created_at").notNull(),
    completedAt: integer("completed_at"),
  },
  (t) => [index("webhook_deliveries_task_idx").on(t.taskId, t.event)],
);

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
