import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/** API keys. `id` is the key_id of `p6_<key_id>:<secret>`; only SHA-256(secret) is stored. */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    name: text("name").notNull().default(""),
    secretHash: text("secret_hash").notNull(),
    /** Comma-separated scopes: "read,write". */
    scopes: text("scopes").notNull(),
    /** null = the deployment default (DEFAULT_RATE_LIMIT_PER_MINUTE). */
    rateLimitPerMinute: integer("rate_limit_per_minute"),
    expiresAt: integer("expires_at"),
    revokedAt: integer("revoked_at"),
    lastUsedAt: integer("last_used_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("api_keys_account_idx").on(t.accountId, t.id)],
);

export type ApiKeyRow = typeof apiKeys.$inferSelect;
