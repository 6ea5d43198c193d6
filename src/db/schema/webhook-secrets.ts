import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * Webhook signing secrets (whsec_<base64>). The current secret has active_until = null; a rotated-out
 * secret keeps signing until active_until (rotation time + 24 h).
 */
export const webhookSecrets = sqliteTable(
  "webhook_secrets",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    secret: text("secret").notNull(),
    activeUntil: integer("active_until"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("webhook_secrets_account_idx").on(t.accountId, t.id)],
);

export type WebhookSecretRow = typeof webhookSecrets.$inferSelect;
