import { and, desc, eq, gte, lt, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { type ApiRequestRow, apiRequests } from "../db/schema";

/** Rows kept per account: the console shows "the last 1,000 API requests". */
export const REQUEST_LOG_LIMIT = 1000;

export const STATUS_CLASSES = ["2xx", "4xx", "5xx"] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

export type RequestEntry = ApiRequestRow;

/**
 * Stores one request and trims the account's log to its newest REQUEST_LOG_LIMIT rows, in one batch (one round
 * trip, one implicit transaction). The trim finds the REQUEST_LOG_LIMIT-th newest id through the
 * (account_id, id) index and deletes what is older; below the limit that id is NULL and nothing is deleted.
 */
export async function recordRequest(db: Db, entry: RequestEntry, limit = REQUEST_LOG_LIMIT) {
  const cutoff = sql`(SELECT ${apiRequests.id} FROM ${apiRequests} WHERE ${apiRequests.accountId} = ${entry.accountId} ORDER BY ${apiRequests.id} DESC LIMIT 1 OFFSET ${limit - 1})`;
  await db.batch([
    db.insert(apiRequests).values(entry).onConflictDoNothing(),
    db.delete(apiRequests).where(and(eq(apiRequests.accountId, entry.accountId), lt(apiRequests.id, cutoff))),
  ]);
}

/** One page of an account's log, newest first, optionally by status class and key. */
export async function listRequests(
  db: Db,
  accountId: string,
  filter: { statusClass?: StatusClass; keyId?: string; beforeId?: string; limit: number },
) {
  const low = filter.statusClass ? Number(filter.statusClass[0]) * 100 : undefined;
  const rows = await db
    .select()
    .from(apiRequests)
    .where(
      and(
        eq(apiRequests.accountId, accountId),
        filter.keyId ? eq(apiRequests.keyId, filter.keyId) : undefined,
        low !== undefined ? gte(apiRequests.status, low) : undefined,
        low !== undefined ? lt(apiRequests.status, low + 100) : undefined,
        filter.beforeId ? lt(apiRequests.id, filter.beforeId) : undefined,
      ),
    )
    .orderBy(desc(apiRequests.id))
    .limit(filter.limit + 1)
    .all();
  return { rows: rows.slice(0, filter.limit), hasNext: rows.length > filter.limit };
}
