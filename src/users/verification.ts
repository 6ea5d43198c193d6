import { and, eq, isNull, sql } from "drizzle-orm";
import { ledgerEntry } from "../credits/ledger";
import type { Db } from "../db/client";
import { accounts, type UserRow, users } from "../db/schema";
import { endUserSessions } from "../sessions/store";
import { checkEmailToken, spendEmailToken, useEmailToken } from "./email-tokens";
import { hashPassword } from "./password";
import { findUserByEmail } from "./service";
import { clearThrottles, signInSubjects } from "./throttle";

/**
 * Marks the user's email verified and grants the sign-up credits held for it, once: the user's update is
 * conditional (still unverified) and the balance change and its ledger row apply only when it changed a row
 * (`changes() = 1`), all in one batch. A second verification, or two racing, grant nothing more.
 */
export async function markVerified(db: Db, user: UserRow, now: number) {
  const credits = user.pendingCredits;
  const [verified] = await db.batch([
    db
      .update(users)
      .set({ emailVerifiedAt: now, pendingCredits: 0 })
      .where(and(eq(users.id, user.id), isNull(users.emailVerifiedAt))),
    ...(credits > 0
      ? [
          db
            .update(accounts)
            .set({ credits: sql`${accounts.credits} + ${credits}` })
            .where(and(eq(accounts.id, user.accountId), sql`changes() = 1`)),
          ledgerEntry(db, {
            accountId: user.accountId,
            kind: "grant",
            amount: credits,
            reason: "sign-up credits (email verified)",
            now,
          }),
        ]
      : []),
  ]);
  return { verified: verified.meta.changes === 1, credits: verified.meta.changes === 1 ? credits : 0 };
}

export type Verified =
  | { ok: true; user: UserRow; credits: number }
  | { ok: false; reason: "malformed" | "unknown" | "expired" | "used" };

/** A verification link opened: spends the token and verifies (granting the held credits). */
export async function verifyEmail(db: Db, token: string, now: number): Promise<Verified> {
  const used = await useEmailToken(db, token, "verify", now);
  if (!used.ok) return used;
  const { credits } = await markVerified(db, used.user, now);
  return { ok: true, user: used.user, credits };
}

/** The user a reset mail goes to, or undefined: the page answers the same either way. */
export const userForReset = (db: Db, email: string) => findUserByEmail(db, email);

export type Reset =
  | { ok: true; user: UserRow }
  | { ok: false; reason: "malformed" | "unknown" | "expired" | "used" }
  | { ok: false; reason: "weak"; problem: string };

/**
 * A new password by a reset link. The token is checked first and spent only once the password is acceptable
 * (a refused password leaves the link working). Then: the new hash, every session of the user ended, the email
 * verified (the link proved it), and the sign-in failures counted against the email (from anywhere, and from
 * this address) forgotten, since they were guesses at the old password. The sign-in throttle is never asked:
 * an owner locked out of password sign-in resets and signs in.
 */
export async function resetPassword(
  db: Db,
  env: Pick<Env, "THROTTLE">,
  input: {
    token: string;
    password: string;
    clientAddress: string;
    problem: (email: string) => string | null;
  },
  now: number,
): Promise<Reset> {
  const checked = await checkEmailToken(db, input.token, "reset", now);
  if (!checked.ok) return checked;
  const problem = input.problem(checked.user.email);
  if (problem) return { ok: false, reason: "weak", problem };
  if (!(await spendEmailToken(db, checked.id, now))) return { ok: false, reason: "used" };
  await db
    .update(users)
    .set({ passwordHash: await hashPassword(input.password) })
    .where(eq(users.id, checked.user.id));
  await endUserSessions(db, checked.user.id);
  await markVerified(db, checked.user, now);
  await clearThrottles(
    env,
    signInSubjects(checked.user.email, input.clientAddress).filter((c) => !c.subject.startsWith("client:")),
  );
  return { ok: true, user: checked.user };
}
