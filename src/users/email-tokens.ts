import { and, eq, gt, isNull } from "drizzle-orm";
import { ulid } from "ulid";
import { digestsEqual, hashSecret } from "../auth/token";
import type { Db } from "../db/client";
import { type EmailTokenPurpose, emailTokens, type UserRow, users } from "../db/schema";
import { newSessionToken } from "../sessions/store";

const MINUTE_MS = 60_000;

/**
 * How long a mailed link works. A reset link signs its holder in with a password of their choosing, so it
 * lives an hour (OWASP's "short" for reset tokens); a verification link only proves the address, so a day,
 * enough for a mail that arrives late or is opened tomorrow.
 */
export const TOKEN_LIFETIME_MS: Record<EmailTokenPurpose, number> = {
  verify: 24 * 60 * MINUTE_MS,
  reset: 60 * MINUTE_MS,
};

/** `<ULID>.<43 base64url characters>`: the id to look the row up by, and 256 random bits only a hash of is kept. */
const TOKEN = /^([0-9A-HJKMNP-TV-Z]{26})\.([A-Za-z0-9_-]{43})$/;

/**
 * A new single-use link for `user`: the token to mail (never stored, never logged) and when it expires. Any
 * earlier unused link of the same purpose stops working, so only the newest mail counts.
 */
export async function issueEmailToken(db: Db, user: UserRow, purpose: EmailTokenPurpose, now: number) {
  const id = ulid(now);
  const secret = newSessionToken();
  const expiresAt = now + TOKEN_LIFETIME_MS[purpose];
  await db.batch([
    db
      .update(emailTokens)
      .set({ usedAt: now })
      .where(
        and(eq(emailTokens.userId, user.id), eq(emailTokens.purpose, purpose), isNull(emailTokens.usedAt)),
      ),
    db.insert(emailTokens).values({
      id,
      userId: user.id,
      purpose,
      secretHash: await hashSecret(secret),
      email: user.email,
      createdAt: now,
      expiresAt,
    }),
  ]);
  return { token: `${id}.${secret}`, expiresAt };
}

export type TokenCheck =
  | { ok: true; id: string; user: UserRow }
  | { ok: false; reason: "malformed" | "unknown" | "expired" | "used" };

/**
 * Whether `token` is a live link of `purpose`: well formed, known, its secret's hash equal (constant time),
 * unused, unexpired, and still for the user's current email. Only reads: `spendEmailToken` uses it up. The
 * reasons are for tests; every page says the same thing for all of them.
 */
export async function checkEmailToken(
  db: Db,
  token: string,
  purpose: EmailTokenPurpose,
  now: number,
): Promise<TokenCheck> {
  const match = TOKEN.exec(token.trim());
  if (!match) return { ok: false, reason: "malformed" };
  const [, id, secret] = match as unknown as [string, string, string];
  const row = await db
    .select()
    .from(emailTokens)
    .where(and(eq(emailTokens.id, id), eq(emailTokens.purpose, purpose)))
    .get();
  const presented = await hashSecret(secret);
  // Compared even without a row (against a digest of the same length), so timing tells nothing either way.
  const equal = digestsEqual(presented, row?.secretHash ?? "0".repeat(presented.length));
  if (!row || !equal) return { ok: false, reason: "unknown" };
  if (row.usedAt !== null) return { ok: false, reason: "used" };
  if (row.expiresAt <= now) return { ok: false, reason: "expired" };
  const user = await db.select().from(users).where(eq(users.id, row.userId)).get();
  if (!user || user.email !== row.email) return { ok: false, reason: "unknown" };
  return { ok: true, id, user };
}

/**
 * Uses a checked token up: one conditional update, so of two requests racing with the same token exactly one
 * gets true.
 */
export async function spendEmailToken(db: Db, id: string, now: number) {
  const spent = await db
    .update(emailTokens)
    .set({ usedAt: now })
    .where(and(eq(emailTokens.id, id), isNull(emailTokens.usedAt), gt(emailTokens.expiresAt, now)));
  return spent.meta.changes === 1;
}

/** Checks and spends in one go (verification, where nothing else is asked for). */
export async function useEmailToken(db: Db, token: string, purpose: EmailTokenPurpose, now: number) {
  const checked = await checkEmailToken(db, token, purpose, now);
  if (!checked.ok) return checked;
  if (!(await spendEmailToken(db, checked.id, now))) return { ok: false as const, reason: "used" as const };
  return checked;
}
