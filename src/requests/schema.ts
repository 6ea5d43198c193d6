import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The request log of one account, in its RequestLog object's own SQLite (src/requests/request-log.ts), not in
 * D1: one row per /v1 request made with one of the account's keys, at most REQUEST_LOG_LIMIT rows. `id` is the
 * request_id (a ULID, so id order is time order). No secret, body or query string is stored: only the route's
 * pattern.
 */
export const requests = sqliteTable("requests", {
  id: text("id").primaryKey(),
  keyId: text("key_id").notNull(),
  method: text("method").notNull(),
  /** The matched route's pattern (`/v1/tasks/:id`); "" when no route matched. */
  route: text("route").notNull(),
  status: integer("status").notNull(),
  durationMs: integer("duration_ms").notNull(),
  /** The problem type's suffix (`not-found`, …) of an error answer, else null. */
  errorCode: text("error_code"),
  createdAt: integer("created_at").notNull(),
});

export type RequestEntry = typeof requests.$inferSelect;

/**
 * The table's DDL, run by the object when it starts. Written out rather than through drizzle-kit's Durable
 * Object migrator: one table of one object, and that migrator would add a second drizzle config, a generated
 * migrations bundle and a wrangler rule to import .sql files. A change to the table adds a statement here that
 * holds on both old and new objects (ALTER TABLE … ADD COLUMN with a default).
 */
export const REQUESTS_DDL = `CREATE TABLE IF NOT EXISTS requests (
  id TEXT PRIMARY KEY NOT NULL,
  key_id TEXT NOT NULL,
  method TEXT NOT NULL,
  route TEXT NOT NULL,
  status INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  error_code TEXT,
  created_at INTEGER NOT NULL
)`;
