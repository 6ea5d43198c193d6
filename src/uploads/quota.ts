import { and, eq, gt, inArray, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { uploads } from "../db/schema";

/**
 * Per-account upload quotas (docs/decisions.md "Uploads (tus 1.0.0)", Quotas): incomplete uploads at once
 * (pending direct URLs included) and bytes stored (complete uploads plus the declared length of incomplete
 * ones). Counted from the `uploads` rows that are live: state pending, uploading or complete and not past
 * expires_at (a row whose alarm has not run yet no longer counts).
 *
 * Race-safe without a transaction: D1 has no interactive transactions, but it runs one statement at a time,
 * so a check and the write it guards are one statement (`INSERT … SELECT … WHERE <usage> within limits`,
 * `UPDATE … WHERE <usage> within limits`): two creations at once cannot both pass on the same count. Those two
 * are raw SQL, as drizzle's builder has no INSERT … SELECT without a FROM table; the same state lists drive
 * them and the usage query below.
 */

export type UploadLimits = { maxIncomplete: number; maxStoredBytes: number };
export type QuotaUsage = { incomplete: number; storedBytes: number };

/** What counts: incomplete uploads at once, and the bytes of every live upload. */
const INCOMPLETE_STATES = ["pending", "uploading"] as const;
const STORED_STATES = [...INCOMPLETE_STATES, "complete"] as const;

const list = (states: readonly string[]) => states.map((state) => `'${state}'`).join(", ");
const LIVE = "account_id = ?1 AND expires_at > ?2 AND state IN";
const INCOMPLETE = `(SELECT count(*) FROM uploads WHERE ${LIVE} (${list(INCOMPLETE_STATES)}))`;
const STORED = `(SELECT coalesce(sum(size_bytes), 0) FROM uploads WHERE ${LIVE} (${list(STORED_STATES)}))`;

export type NewRow = {
  id: string;
  accountId: string;
  /** Upload-Length; 0 for a pending direct URL. */
  sizeBytes: number;
  filename: string | null;
  state: "pending" | "uploading";
  r2Key: string;
  createdAt: number;
  expiresAt: number;
};

/** The upload's row, only if the account stays within both limits with it; false when refused. */
export async function insertWithinQuota(db: D1Database, row: NewRow, limits: UploadLimits) {
  const result = await db
    .prepare(
      `INSERT INTO uploads (id, account_id, size_bytes, filename, state, r2_key, created_at, expires_at)
       SELECT ?3, ?1, ?4, ?5, ?6, ?7, ?8, ?9
       WHERE ${INCOMPLETE} < ?10 AND ${STORED} + ?4 <= ?11`,
    )
    .bind(
      row.accountId,
      row.createdAt,
      row.id,
      row.sizeBytes,
      row.filename,
      row.state,
      row.r2Key,
      row.createdAt,
      row.expiresAt,
      limits.maxIncomplete,
      limits.maxStoredBytes,
    )
    .run();
  return result.meta.changes === 1;
}

/**
 * A pending direct upload's row becomes the upload its browser created, only if its declared length fits the
 * bytes limit (it was counted as incomplete since its URL was issued); false when refused.
 */
export async function startWithinQuota(
  db: D1Database,
  row: { id: string; accountId: string; sizeBytes: number; filename: string | null; expiresAt: number },
  limits: UploadLimits,
  now: number,
) {
  const result = await db
    .prepare(
      `UPDATE uploads SET state = 'uploading', size_bytes = ?4, filename = ?5, expires_at = ?6
       WHERE id = ?3 AND state = 'pending' AND ${STORED} + ?4 <= ?7`,
    )
    .bind(row.accountId, now, row.id, row.sizeBytes, row.filename, row.expiresAt, limits.maxStoredBytes)
    .run();
  return result.meta.changes === 1;
}

/**
 * What the account holds now, as the limits count it: one statement, so it can join a D1 batch (GET
 * /v1/account reads it with the balance).
 */
export function quotaUsageQuery(db: Db, accountId: string, now: number) {
  return db
    .select({
      incomplete: sql<number>`count(*) filter (where ${inArray(uploads.state, [...INCOMPLETE_STATES])})`,
      storedBytes: sql<number>`coalesce(sum(${uploads.sizeBytes}), 0)`,
    })
    .from(uploads)
    .where(
      and(
        eq(uploads.accountId, accountId),
        inArray(uploads.state, [...STORED_STATES]),
        gt(uploads.expiresAt, now),
      ),
    );
}

export const usageOf = (rows: { incomplete: number; storedBytes: number }[]): QuotaUsage => ({
  incomplete: Number(rows[0]?.incomplete ?? 0),
  storedBytes: Number(rows[0]?.storedBytes ?? 0),
});

export async function quotaUsage(db: Db, accountId: string, now: number): Promise<QuotaUsage> {
  return usageOf(await quotaUsageQuery(db, accountId, now).all());
}

/** The account's usage and limits as GET /v1/account shows them (and the console can). */
export function quotaView(usage: QuotaUsage, limits: UploadLimits) {
  return {
    incomplete: usage.incomplete,
    max_incomplete: limits.maxIncomplete,
    stored_bytes: usage.storedBytes,
    max_stored_bytes: limits.maxStoredBytes,
  };
}

/** The 403's detail: which limit, and the figures (`countChecked`: the incomplete count was a condition). */
export function quotaDetail(
  usage: QuotaUsage,
  limits: UploadLimits,
  adding: number,
  countChecked: boolean,
): string {
  if (countChecked && usage.incomplete >= limits.maxIncomplete)
    return `The account has ${usage.incomplete} incomplete uploads (pending direct upload URLs included), its limit of ${limits.maxIncomplete} at once: finish or delete one first.`;
  return `The account stores ${usage.storedBytes} bytes of uploads (complete, and declared by incomplete ones); ${adding} more would exceed its limit of ${limits.maxStoredBytes} bytes. Delete uploads it no longer needs.`;
}
