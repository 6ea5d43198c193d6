import { and, eq, inArray, sql } from "drizzle-orm";
import { parseScopes } from "../auth/authenticate";
import type { Db } from "../db/client";
import { accounts, apiKeys, tasks } from "../db/schema";
import { quotaUsageQuery, quotaView, type UploadLimits, usageOf } from "../uploads/quota";

/**
 * What GET /v1/account shows: the balance, the credits held by the account's unfinished tasks (reserved at
 * creation, kept on success, refunded on failure or cancel), the calling key's scopes and rate limit, and the
 * account's upload quotas (src/uploads/quota.ts: usage and limits). Read in one batch, so the figures are the
 * same moment's.
 */
export async function accountOverview(
  db: Db,
  accountId: string,
  keyId: string,
  settings: { defaultRateLimit: number; uploadLimits: UploadLimits; now: number },
) {
  const [account, reserved, key, uploadUsage] = await db.batch([
    db.select().from(accounts).where(eq(accounts.id, accountId)).limit(1),
    db
      .select({ credits: sql<number>`coalesce(sum(${tasks.cost}), 0)`, count: sql<number>`count(*)` })
      .from(tasks)
      .where(and(eq(tasks.accountId, accountId), inArray(tasks.status, ["queued", "processing"]))),
    db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.accountId, accountId)))
      .limit(1),
    quotaUsageQuery(db, accountId, settings.now),
  ]);
  const row = account[0];
  const keyRow = key[0];
  if (!row || !keyRow) return undefined;
  return {
    id: row.id,
    name: row.name,
    balance: row.credits,
    reserved_credits: Number(reserved[0]?.credits ?? 0),
    tasks_in_progress: Number(reserved[0]?.count ?? 0),
    key: {
      id: keyRow.id,
      name: keyRow.name,
      scopes: [...parseScopes(keyRow.scopes)],
      rate_limit_per_minute: keyRow.rateLimitPerMinute ?? settings.defaultRateLimit,
      expires_at: keyRow.expiresAt === null ? null : new Date(keyRow.expiresAt).toISOString(),
    },
    uploads: quotaView(usageOf(uploadUsage), settings.uploadLimits),
  };
}
