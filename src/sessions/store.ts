import { and, eq, gt, lte, ne, or } from "drizzle-orm";
import { hashSecret } from "../auth/token";
import type { Db } from "../db/client";
import { type SessionRow, sessions, users } from "../db/schema";
import { bytesToBase64 } from "../util/encoding";

/** A session ends this long after it was created, whatever its use. */
export const SESSION_ABSOLUTE_MS = 30 * 24 * 60 * 60 * 1000;
/** …or after this long without a request. */
export const SESSION_IDLE_MS = 3 * 24 * 60 * 60 * 1000;
/** last_seen_at is written at most this often per session (one write a minute, not one per page). */
const TOUCH_GRANULARITY_MS = 60_000;

const base64Url = (bytes: Uint8Array) =>
  bytesToBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/** 256 random bits, base64url: what the cookie carries. */
export function newSessionToken() {
  return base64Url(crypto.getRandomValues(new Uint8Array(32)));
}

/** The stored id of a token: its SHA-256, so a read of the table signs no one in. */
export const sessionId = (token: string) => hashSecret(token);

export async function createSession(db: Db, userId: string, now: number) {
  const token = newSessionToken();
  const row: SessionRow = {
    id: await sessionId(token),
    userId,
    createdAt: now,
    lastSeenAt: now,
    expiresAt: now + SESSION_ABSOLUTE_MS,
  };
  await db.insert(sessions).values(row);
  return { token, row };
}

/** The live session of a token with its user, or null (unknown, ended, expired or idle too long). */
export async function openSession(db: Db, token: string | undefined, now: number) {
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const id = await sessionId(token);
  const found = await db
    .select({ session: sessions, user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(
      and(eq(sessions.id, id), gt(sessions.expiresAt, now), gt(sessions.lastSeenAt, now - SESSION_IDLE_MS)),
    )
    .get();
  if (!found) return null;
  if (now - found.session.lastSeenAt >= TOUCH_GRANULARITY_MS) {
    await db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, id));
  }
  return found;
}

export async function endSession(db: Db, id: string) {
  await db.delete(sessions).where(eq(sessions.id, id));
}

/** Ends every session of the user, or every one but `keepId` (a password change keeps the one making it). */
export async function endUserSessions(db: Db, userId: string, keepId?: string) {
  await db
    .delete(sessions)
    .where(keepId ? and(eq(sessions.userId, userId), ne(sessions.id, keepId)) : eq(sessions.userId, userId));
}

export async function countUserSessions(db: Db, userId: string, now: number) {
  const rows = await db
    .select({ id: sessions.id })
    .from(sessions)
    .where(
      and(
        eq(sessions.userId, userId),
        gt(sessions.expiresAt, now),
        gt(sessions.lastSeenAt, now - SESSION_IDLE_MS),
      ),
    )
    .all();
  return rows.length;
}

/** Deletes the sessions that can no longer be used (past their absolute or idle expiry); run every minute. */
export async function purgeExpiredSessions(db: Db, now: number) {
  await db
    .delete(sessions)
    .where(or(lte(sessions.expiresAt, now), lte(sessions.lastSeenAt, now - SESSION_IDLE_MS)));
}
