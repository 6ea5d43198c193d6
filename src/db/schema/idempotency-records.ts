import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Idempotency-Key records of the synchronous routes, scoped to the account, kept 24 h. */
export const idempotencyRecords = sqliteTable(
  "idempotency_records",
  {
    accountId: text("account_id").notNull(),
    key: text("key").notNull(),
    /** SHA-256 of method, path and canonical JSON body. */
    fingerprint: text("fingerprint").notNull(),
    state: text("state", { enum: ["in_progress", "completed"] }).notNull(),
    requestId: text("request_id").notNull(),
    responseStatus: integer("response_status"),
    /** JSON object of the response headers worth replaying. */
    responseHeaders: text("response_headers"),
    responseBody: text("response_body"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] })],
);

export type IdempotencyRow = typeof idempotencyRecords.$inferSelect;
