import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { webhookDeliveries } from "./webhook-deliveries";

/** Every delivery attempt: HTTP status (null when no response), latency and error. */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: text("id").primaryKey(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id),
    attempt: integer("attempt").notNull(),
    statusCode: integer("status_code"),
    latencyMs: integer("latency_ms").notNull(),
    error: text("error"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    index("webhook_attempts_delivery_idx").on(t.deliveryId),
    uniqueIndex("webhook_attempts_delivery_attempt_idx").on(t.deliveryId, t.attempt),
  ],
);

export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;
