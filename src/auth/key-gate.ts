import { DurableObject } from "cloudflare:workers";
import { type Bucket, type RateDecision, slideWindow } from "../ratelimit/window";
import { digestsEqual } from "./token";

type KeyRecord = {
  accountId: string;
  secretHash: string;
  scopes: string;
  rateLimitPerMinute: number | null;
  expiresAt: number | null;
  revokedAt: number | null;
  lastUsedAt: number | null;
};

export type GateResult = { ok: false } | { ok: true; accountId: string; scopes: string; rate: RateDecision };

/** Compared against when the key_id is unknown, so both paths do the same work. */
const ABSENT_HASH = "0".repeat(64);
/** The record is re-read from D1 at least this often (revocation itself is pushed, see `revoke`). */
const RECORD_TTL_MS = 60_000;
/** last_used_at is written to D1 at most once a minute per key, in the background. */
const LAST_USED_GRANULARITY_MS = 60_000;

/**
 * One object per API key: the key's single point of truth for authentication and its exact rate limit, in one
 * round trip. It caches the key record (immutable but for revocation), and revocation is pushed to it by
 * `revokeKey` before the revoke call returns, so a revoked key is refused on the very next request. The rate
 * window is persisted in the object's storage, so eviction forgets nothing.
 */
export class KeyGate extends DurableObject<Env> {
  private record: KeyRecord | null | undefined;
  private loadedAt = 0;
  private buckets: Bucket[] | undefined;

  async authorize(keyId: string, presentedHash: string, defaultLimit: number): Promise<GateResult> {
    const now = Date.now();
    if (this.record === undefined || now - this.loadedAt > RECORD_TTL_MS) await this.load(keyId, now);
    const record = this.record ?? null;
    const matches = digestsEqual(presentedHash, record?.secretHash ?? ABSENT_HASH);
    if (
      !record ||
      !matches ||
      record.revokedAt !== null ||
      (record.expiresAt !== null && record.expiresAt <= now)
    ) {
      return { ok: false };
    }

    this.buckets ??= this.ctx.storage.kv.get<Bucket[]>("buckets") ?? [];
    const { decision, buckets } = slideWindow(this.buckets, record.rateLimitPerMinute ?? defaultLimit, now);
    this.buckets = buckets;
    // Persisted for eviction, without holding the answer until the write is confirmed: the in-memory window
    // is authoritative while the object lives, and the object is single-threaded, so counting stays exact.
    if (decision.allowed) void this.ctx.storage.put("buckets", buckets, { allowUnconfirmed: true });

    if (record.lastUsedAt === null || now - record.lastUsedAt >= LAST_USED_GRANULARITY_MS) {
      record.lastUsedAt = now;
      this.ctx.waitUntil(
        this.env.DB.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ?").bind(now, keyId).run(),
      );
    }
    return { ok: true, accountId: record.accountId, scopes: record.scopes, rate: decision };
  }

  /** Called by revokeKey after D1 is updated. */
  revoke(revokedAt: number) {
    if (this.record) this.record.revokedAt ??= revokedAt;
  }

  private async load(keyId: string, now: number) {
    const row = await this.env.DB.prepare(
      `SELECT account_id, secret_hash, scopes, rate_limit_per_minute, expires_at, revoked_at, last_used_at
       FROM api_keys WHERE id = ?`,
    )
      .bind(keyId)
      .first<{
        account_id: string;
        secret_hash: string;
        scopes: string;
        rate_limit_per_minute: number | null;
        expires_at: number | null;
        revoked_at: number | null;
        last_used_at: number | null;
      }>();
    this.record = row
      ? {
          accountId: row.account_id,
          secretHash: row.secret_hash,
          scopes: row.scopes,
          rateLimitPerMinute: row.rate_limit_per_minute,
          expiresAt: row.expires_at,
          revokedAt: row.revoked_at,
          lastUsedAt: row.last_used_at,
        }
      : null;
    this.loadedAt = now;
  }
}
