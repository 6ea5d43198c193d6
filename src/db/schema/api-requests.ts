import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The request log: one row per /v1 request made with an API key, at most REQUEST_LOG_LIMIT per account
 * (src/requests/log.ts trims in the same batch). `id` is the request_id (a ULID, so id order is time order).
 * No secret, body or query string is stored: only the route's pattern.
 */
export const apiRequests = sqliteTable(
  "api_requests",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    keyId: text("key_id").notNull(),
    method: text("method").notNull(),
    /** The matched route's pattern (`/v1/tasks/:id`); "" when no route matched. */
    route: text("route").notNull(),
    status: integer("status").notNull(),
    durationMs: integer("duration_ms").notNull(),
    /** The problem type's suffix (`not-found`, …) of an error answer, else null. */
    errorCode: text("error_code"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("api_requests_account_idx").on(t.accountId, t.id)],
);

export type ApiRequestRow = typeof apiRequests.$inferSelect;
