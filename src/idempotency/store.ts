import { and, eq, lt, or, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { idempotencyRecords } from "../db/schema";
import { ApiError } from "../errors/api-error";

/** Records are kept 24 h (decisions.md §8). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export type StoredResponse = { status: number; headers: Record<string, string>; body: string };

export type Claim = { kind: "claimed" } | { kind: "replay"; response: StoredResponse };

type Key = { accountId: string; key: string };

type ClaimId = Key & { fingerprint: string; requestId: string; now: number; leaseMs: number };

/**
 * The one conditional statement that claims an Idempotency-Key for one execution: of any number of concurrent
 * requests exactly one claims it, and an expired record, or an in-progress one whose lease ran out (its request
 * died mid-way), is taken over. Exported for a batch: a caller can read what it needs in the same round trip
 * (src/operations/sync.ts reads the balance), then hand the returned rows to `settleClaim`.
 */
export function claimStatement(db: Db, id: ClaimId) {
  return db
    .insert(idempotencyRecords)
    .values({
      accountId: id.accountId,
      key: id.key,
      fingerprint: id.fingerprint,
      state: "in_progress",
      requestId: id.requestId,
      createdAt: id.now,
      expiresAt: id.now + IDEMPOTENCY_TTL_MS,
    })
    .onConflictDoUpdate({
      target: [idempotencyRecords.accountId, idempotencyRecords.key],
      set: {
        fingerprint: id.fingerprint,
        state: "in_progress",
        requestId: id.requestId,
        responseStatus: null,
        responseHeaders: null,
        responseBody: null,
        createdAt: id.now,
        expiresAt: id.now + IDEMPOTENCY_TTL_MS,
      },
      setWhere: or(
        lt(idempotencyRecords.expiresAt, id.now),
        and(
          eq(idempotencyRecords.state, "in_progress"),
          lt(idempotencyRecords.createdAt, id.now - id.leaseMs),
        ),
      ),
    })
    .returning({ requestId: idempotencyRecords.requestId });
}

/**
 * What `claimStatement`'s rows mean: claimed, or else the record decides: a different fingerprint → 422,
 * still running → 409, completed → the stored response to replay.
 */
export async function settleClaim(db: Db, id: ClaimId, rows: { requestId: string }[]): Promise<Claim> {
  if (rows[0]?.requestId === id.requestId) return { kind: "claimed" };

  const record = await db
    .select()
    .from(idempotencyRecords)
    .where(and(eq(idempotencyRecords.accountId, id.accountId), eq(idempotencyRecords.key, id.key)))
    .get();
  if (!record) return claimKey(db, id); // released between our two statements: try again
  if (record.fingerprint !== id.fingerprint) {
    throw new ApiError(
      "IDEMPOTENCY_KEY_REUSE",
      "This Idempotency-Key was already used for a different request (method, path or body differ).",
    );
  }
  if (record.state === "in_progress") {
    throw new ApiError(
      "RESOURCE_CONFLICT",
      "A request with this Idempotency-Key is still in progress; retry later.",
      {
        headers: { "Retry-After": "1" },
      },
    );
  }
  return {
    kind: "replay",
    response: {
      status: record.responseStatus ?? 200,
      headers: JSON.parse(record.responseHeaders ?? "{}") as Record<string, string>,
      body: record.responseBody ?? "",
    },
  };
}

/** Claims an Idempotency-Key for one execution (`claimStatement`, then `settleClaim`). */
export async function claimKey(db: Db, id: ClaimId): Promise<Claim> {
  return settleClaim(db, id, await claimStatement(db, id).all());
}

/**
 * The statement that stores the response of the execution that holds the claim. `onlyIf`: an extra condition,
 * for a batch where the response may be kept only if an earlier statement did its part (the charge).
 */
export function completeStatement(
  db: Db,
  id: Key & { requestId: string },
  response: StoredResponse,
  onlyIf?: SQL,
) {
  return db
    .update(idempotencyRecords)
    .set({
      state: "completed",
      responseStatus: response.status,
      responseHeaders: JSON.stringify(response.headers),
      responseBody: response.body,
    })
    .where(
      and(
        eq(idempotencyRecords.accountId, id.accountId),
        eq(idempotencyRecords.key, id.key),
        eq(idempotencyRecords.requestId, id.requestId),
        onlyIf,
      ),
    );
}

/** Stores the response of the execution that holds the claim. */
export async function completeKey(db: Db, id: Key & { requestId: string }, response: StoredResponse) {
  await completeStatement(db, id, response);
}

/** Gives the key back (transient failures, and responses that did not execute), so the same key may retry. */
export async function releaseKey(db: Db, id: Key & { requestId: string }) {
  await db
    .delete(idempotencyRecords)
    .where(
      and(
        eq(idempotencyRecords.accountId, id.accountId),
        eq(idempotencyRecords.key, id.key),
        eq(idempotencyRecords.requestId, id.requestId),
      ),
    );
}

/** Housekeeping: drops expired records (run from the scheduled handler). */
export async function purgeExpiredKeys(db: Db, now: number) {
  await db.delete(idempotencyRecords).where(lt(idempotencyRecords.expiresAt, now));
}
