import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { tasks } from "./tasks";
import { uploads } from "./uploads";

/**
 * One webhook message (one event of one task, or of one direct upload: upload.completed); `id` is the
 * webhook-id (msg_<ULID>), the same on every attempt. Exactly one of task_id and upload_id is set.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    taskId: text("task_id").references(() => tasks.id),
    uploadId: text("upload_id").references(() => uploads.id),
    accountId: text("account_id").notNull(),
    event: text("event").notNull(),
    url: text("url").notNull(),
    /** The signed body, fixed at the event so every attempt sends the same task (or upload) snapshot. */
    body: text("body").notNull(),
    status: text("status", { enum: ["pending", "delivered", "dead"] }).notNull(),
    attemptCount: integer("attempt_count").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at"),
    createdAt: integer("created_at").notNull(),
    completedAt: integer("completed_at"),
  },
  (t) => [
    index("webhook_deliveries_task_idx").on(t.taskId, t.event),
    index("webhook_deliveries_upload_idx").on(t.uploadId, t.event),
    // Unqualified names: the generated migration builds the table under another name, then renames it.
    check("webhook_deliveries_subject", sql`("task_id" IS NULL) <> ("upload_id" IS NULL)`),
  ],
);

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
