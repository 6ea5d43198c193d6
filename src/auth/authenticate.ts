import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { apiKeys } from "../db/schema";
import { ApiError } from "../errors/api-error";
import { digestsEqual, hashSecret, type ParsedToken } from "./token";

export type Scope = "read" | "write";

export type AuthenticatedKey = {
  keyId: string;
  accountId: string;
  scopes: ReadonlySet<Scope>;
  rateLimitPerMinute: number | null;
  lastUsedAt: number | null;
};

/** Compared against when the key_id is unknown, so both paths hash and compare (comparable timing). */
const ABSENT_HASH = "0".repeat(64);

/**
 * Checks a well-formed token. Every failure — unknown key_id, wrong secret, revoked, expired — throws the
 * same AUTH_INVALID_TOKEN, after the same work.
 */
export async function authenticateKey(db: Db, token: ParsedToken, now: number): Promise<AuthenticatedKey> {
  const [row, presentedHash] = await Promise.all([
    db
      .select({
        id: apiKeys.id,
        accountId: apiKeys.accountId,
        secretHash: apiKeys.secretHash,
        scopes: apiKeys.scopes,
        rateLimitPerMinute: apiKeys.rateLimitPerMinute,
        expiresAt: apiKeys.expiresAt,
        revokedAt: apiKeys.revokedAt,
        lastUsedAt: apiKeys.lastUsedAt,
      })
      .from(apiKeys)
      .where(eq(apiKeys.id, token.keyId))
      .get(),
    hashSecret(token.secret),
  ]);
  const matches = digestsEqual(presentedHash, row?.secretHash ?? ABSENT_HASH);
  const usable =
    row !== undefined && row.revokedAt === null && (row.expiresAt === null || row.expiresAt > now);
  if (!matches || !usable) throw new ApiError("AUTH_INVALID_TOKEN");
  return {
    keyId: row.id,
    accountId: row.accountId,
    scopes: parseScopes(row.scopes),
    rateLimitPerMinute: row.rateLimitPerMinute,
    lastUsedAt: row.lastUsedAt,
  };
}

export function parseScopes(text: string): ReadonlySet<Scope> {
  return new Set(text.split(",").filter((s): s is Scope => s === "read" || s === "write"));
}

/** last_used_at is written at most once a minute per key, after the response (off the critical path). */
export const LAST_USED_GRANULARITY_MS = 60_000;

export function touchLastUsed(db: Db, key: AuthenticatedKey, now: number) {
  if (key.lastUsedAt !== null && now - key.lastUsedAt < LAST_USED_GRANULARITY_MS) return null;
  return db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, key.keyId)).run();
}
