import { and, desc, eq, gt, isNull, or, sql } from "drizzle-orm";
import { gateFor, parseScopes, type Scope } from "../auth/authenticate";
import { generateApiKey, maskKey } from "../auth/token";
import type { Db } from "../db/client";
import { type ApiKeyRow, accounts, apiKeys } from "../db/schema";
import { ApiError } from "../errors/api-error";

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

/**
 * Active keys (neither revoked nor expired) an account may hold, the default key included: enough for rotation
 * (old and new side by side) and a key per environment or service. Each key has its own rate limit, so without a
 * cap the limit multiplied with the keys made (44 in 0.3 s, issue 40). The operator's paths obey it too.
 */
export const MAX_ACTIVE_KEYS = 10;

/** The refusal past MAX_ACTIVE_KEYS: 409, on the admin API as problem+json, on the pages as their message. */
export const tooManyKeys = () =>
  new ApiError(
    "RESOURCE_CONFLICT",
    `The account already has ${MAX_ACTIVE_KEYS} active keys, the most it may hold. Revoke one it no longer needs, then create the new one.`,
  );

/**
 * A new key, unless the account holds MAX_ACTIVE_KEYS active keys already. The count and the
 * insert are one statement (INSERT … SELECT … WHERE count < cap), so a burst of creations cannot pass the cap
 * together. Past the cap: tooManyKeys (409).
 */
export async function createKey(db: Db, accountId: string, input: NewKey, now: number) {
  const { row, key } = await buildKey(accountId, input, now);
  const value = <T>(v: T, column: string) => sql<T>`${v}`.as(column);
  const active = db
    .select({ n: sql<number>`count(*)` })
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.accountId, accountId),
        isNull(apiKeys.revokedAt),
        or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)),
      ),
    );
  const inserted = await db.insert(apiKeys).select(
    db
      .select({
        id: value(row.id, "id"),
        accountId: accounts.id,
        name: value(row.name, "name"),
        secretHash: value(row.secretHash, "secret_hash"),
        scopes: value(row.scopes, "scopes"),
        rateLimitPerMinute: value(row.rateLimitPerMinute, "rate_limit_per_minute"),
        expiresAt: value(row.expiresAt, "expires_at"),
        revokedAt: value(row.revokedAt, "revoked_at"),
        lastUsedAt: value(row.lastUsedAt, "last_used_at"),
        createdAt: value(row.createdAt, "created_at"),
      })
      .from(accounts)
      .where(and(eq(accounts.id, accountId), sql`(${active}) < ${MAX_ACTIVE_KEYS}`)),
  );
  if (inserted.meta.changes !== 1) throw tooManyKeys();
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
