import { and, desc, eq, isNull } from "drizzle-orm";
import { gateFor, parseScopes, type Scope } from "../auth/authenticate";
import { generateApiKey, maskKey } from "../auth/token";
import type { Db } from "../db/client";
import { type ApiKeyRow, apiKeys } from "../db/schema";

export type NewKey = {
  name?: string;
  scopes?: Scope[];
  expiresInDays?: number;
  rateLimitPerMinute?: number | null;
};

const DAY_MS = 86_400_000;

/** Builds a key record; the full key is returned to the caller once and never stored. */
export async function buildKey(accountId: string, input: NewKey, now: number) {
  const { keyId, key, secretHash } = await generateApiKey();
  const row: ApiKeyRow = {
    id: keyId,
    accountId,
    name: input.name ?? "",
    secretHash,
    scopes: [...new Set(input.scopes ?? ["read", "write"])].sort().join(","),
    rateLimitPerMinute: input.rateLimitPerMinute ?? null,
    expiresAt: input.expiresInDays ? now + input.expiresInDays * DAY_MS : null,
    revokedAt: null,
    lastUsedAt: null,
    createdAt: now,
  };
  return { row, key };
}

export async function createKey(db: Db, accountId: string, input: NewKey, now: number) {
  const { row, key } = await buildKey(accountId, input, now);
  await db.insert(apiKeys).values(row);
  return { row, key };
}

export async function listKeys(db: Db, accountId: string) {
  return db.select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).orderBy(desc(apiKeys.id)).all();
}

/**
 * Revokes for good; the row stays for audit. D1 first, then the key's gate (which caches the record), so the
 * very next request with the key is refused. Returns the revocation time, or null for an unknown key.
 */
export async function revokeKey(db: Db, env: Env, keyId: string, now: number): Promise<number | null> {
  await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)));
  const row = await db
    .select({ revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .where(eq(apiKeys.id, keyId))
    .get();
  if (!row?.revokedAt) return null;
  await gateFor(env, keyId).revoke(row.revokedAt);
  return row.revokedAt;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A key as listings show it: masked, never the secret or its hash. */
export function keyView(row: ApiKeyRow) {
  return {
    id: row.id,
    prefix: maskKey(row.id),
    name: row.name,
    scopes: [...parseScopes(row.scopes)],
    expires_at: iso(row.expiresAt),
    revoked_at: iso(row.revokedAt),
    last_used_at: iso(row.lastUsedAt),
    rate_limit_per_minute: row.rateLimitPerMinute,
    created_at: new Date(row.createdAt).toISOString(),
  };
}
