import { and, eq, gt, lte, ne, or } from "drizzle-orm";
import { hashSecret } from "../auth/token";
import type { Db } from "../db/client";
import { type SessionKind, type SessionRow, sessions, users } from "../db/schema";
import { bytesToBase64Url } from "../util/encoding";

const HOUR_MS = 60 * 60 * 1000;

/**
 * How long a session of each kind lives: `absoluteMs` after it was created whatever its use, or `idleMs` after
 * its last request. An operator holds every account's keys, so theirs is a working day, idle after an hour.
 */
export const SESSION_LIFETIMES: Record<SessionKind, { absoluteMs: number; idleMs: number }> = {
  user: { absoluteMs: 30 * 24 * HOUR_MS, idleMs: 3 * 24 * HOUR_MS },
  operator: { absoluteMs: 12 * HOUR_MS, idleMs: HOUR_MS },
};
export const SESSION_ABSOLUTE_MS = SESSION_LIFETIMES.user.absoluteMs;
export const SESSION_IDLE_MS = SESSION_LIFETIMES.user.idleMs;
/** last_seen_at is written at most this often per session (one write a minute, not one per page). */
const TOUCH_GRANULARITY_MS = 60_000;

/** 256 random bits, base64url: what the cookie carries. */
export function newSessionToken() {
  return bytesToBase64Url(crypto.getRandomValues(new Uint8Array(32)));
}

/** Whether a cookie value can be a session token at all (checked before any digest or query). */
export const isSessionToken = (token: string | undefined): token is string =>
  token !== undefined && /^[A-Za-z0-9_-]{43}$/.test(token);

/** The stored id of a token: its SHA-256, so a read of the table signs no one in. */
export const sessionId = (token: string) => hashSecret(token);

/**
 * Starts a session of `kind` and returns the cookie's token with the stored row. `idOf` turns the token into
 * the stored id: its SHA-256, unless the caller keys the digest (an operator session's is keyed by ADMIN_TOKEN).
 */
export async function startSession(
  db: Db,
  owner: { kind: "user"; userId: string } | { kind: "operator" },
  now: number,
  idOf: (token: string) => Promise<string> = sessionId,
) {
  const token = newSessionToken();
  const row: SessionRow = {
    id: await idOf(token),
    kind: owner.kind,
    userId: owner.kind === "user" ? owner.userId : null,
    createdAt: now,
    lastSeenAt: now,
    expiresAt: now + SESSION_LIFETIMES[owner.kind].absoluteMs,
  };
  await db.insert(sessions).values(row);
  return { token, row };
}

export const createSession = (db: Db, userId: string, now: number) =>
  startSession(db, { kind: "user", userId }, now);

/** The condition of a live session of `kind` at `now`: not past its absolute expiry, not idle too long. */
function live(kind: SessionKind, now: number) {
  return and(
    eq(sessions.kind, kind),
    gt(sessions.expiresAt, now),
    gt(sessions.lastSeenAt, now - SESSION_LIFETIMES[kind].idleMs),
  );
}

/** Records a request on a session, at most once a minute. */
async function touch(db: Db, row: SessionRow, now: number) {
  if (now - row.lastSeenAt >= TOUCH_GRANULARITY_MS) {
    await db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, row.id));
  }
}

/** The live session of a token with its user, or null (unknown, ended, expired or idle too long). */
export async function openSession(db: Db, token: string | undefined, now: number) {
  if (!isSessionToken(token)) return null;
  const id = await sessionId(token);
  const found = await db
    .select({ session: sessions, user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.id, id), live("user", now)))
    .get();
  if (!found) return null;
  await touch(db, found.session, now);
  return found;
}

/** The live operator session stored under `id`, or null (unknown, signed out, expired or idle too long). */
export async function openOperatorSession(db: Db, id: string, now: number) {
  const row = await db
    .select()
    .from(sessions)
    .where(and(eq(sessions.id, id), live("operator", now)))
    .get();
  if (!row) return null;
  await touch(db, row, now);
  return row;
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
    .where(and(eq(sessions.userId, userId), live("user", now)))
    .all();
  return rows.length;
}

/** Deletes the sessions that can no longer be used (past their absolute or idle expiry); run every minute. */
export async function purgeExpiredSessions(db: Db, now: number) {
  await db
    .delete(sessions)
    .where(
      or(
        lte(sessions.expiresAt, now),
        ...Object.entries(SESSION_LIFETIMES).map(([kind, { idleMs }]) =>
          and(eq(sessions.kind, kind as SessionKind), lte(sessions.lastSeenAt, now - idleMs)),
        ),
      ),
    );
}
