import { DurableObject } from "cloudflare:workers";
import { and, asc, count, desc, eq, gte, inArray, lt, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/durable-sqlite";
import { REQUESTS_DDL, type RequestEntry, requests } from "./schema";

/** Rows kept per account: the console shows "the last 1,000 API requests". */
export const REQUEST_LOG_LIMIT = 1000;

export const STATUS_CLASSES = ["2xx", "4xx", "5xx"] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

export type RequestFilter = { statusClass?: StatusClass; keyId?: string; beforeId?: string; limit: number };

const placeholders = {
  id: sql.placeholder("id"),
  keyId: sql.placeholder("keyId"),
  method: sql.placeholder("method"),
  route: sql.placeholder("route"),
  status: sql.placeholder("status"),
  durationMs: sql.placeholder("durationMs"),
  errorCode: sql.placeholder("errorCode"),
  createdAt: sql.placeholder("createdAt"),
};

/**
 * One object per account: its request log, in the object's own SQLite (docs/decisions.md "Request log"). A
 * request's row costs a write here, in the account's object, instead of a write to the one D1 database every
 * account shares, so the log's write rate grows with the number of accounts rather than capping the service.
 * The object is single-threaded, so the row count it keeps in memory is exact and the log never holds more
 * than REQUEST_LOG_LIMIT rows: each write past the limit deletes the oldest rows in the same call (and so in
 * the same implicit transaction).
 */
export class RequestLog extends DurableObject<Env> {
  private readonly db = drizzle(this.ctx.storage);
  private rows: number;
  // Prepared once: the insert is on every API request's path, and drizzle would otherwise build its SQL anew
  // for each row.
  private readonly insert = this.db
    .insert(requests)
    .values(placeholders)
    .onConflictDoNothing()
    .returning({ id: requests.id })
    .prepare();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(REQUESTS_DDL);
    this.rows = this.db.select({ n: count() }).from(requests).get()?.n ?? 0;
  }

  /**
   * Stores requests (each once: a repeated id changes nothing) and trims the log to its newest `limit` rows.
   * The Worker sends the entries of one isolate's requests together (src/requests/log.ts).
   */
  record(entries: RequestEntry[], limit = REQUEST_LOG_LIMIT): void {
    for (const entry of entries) this.rows += this.insert.all(entry).length;
    if (this.rows <= limit) return;
    const oldest = this.db
      .select({ id: requests.id })
      .from(requests)
      .orderBy(asc(requests.id))
      .limit(this.rows - limit);
    this.db.delete(requests).where(inArray(requests.id, oldest)).run();
    this.rows = limit;
  }

  /** One page of the log, newest first, optionally by status class and key, before a cursor's id. */
  list(filter: RequestFilter): { rows: RequestEntry[]; hasNext: boolean } {
    const low = filter.statusClass ? Number(filter.statusClass[0]) * 100 : undefined;
    const rows = this.db
      .select()
      .from(requests)
      .where(
        and(
          filter.keyId ? eq(requests.keyId, filter.keyId) : undefined,
          low !== undefined ? gte(requests.status, low) : undefined,
          low !== undefined ? lt(requests.status, low + 100) : undefined,
          filter.beforeId ? lt(requests.id, filter.beforeId) : undefined,
        ),
      )
      .orderBy(desc(requests.id))
      .limit(filter.limit + 1)
      .all();
    return { rows: rows.slice(0, filter.limit), hasNext: rows.length > filter.limit };
  }
}
