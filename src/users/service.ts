import { asc, eq } from "drizzle-orm";
import { ulid } from "ulid";
import { createAccount } from "../accounts/service";
import type { Db } from "../db/client";
import { type UserRow, users } from "../db/schema";
import { hashPassword, needsRehash, verifyAgainstDummy, verifyPassword } from "./password";
import { challengeLevel, recordSignInFailure, signInSubjects } from "./throttle";

/** Emails are compared trimmed and lower-cased; that is also how they are stored. */
export function normalizeEmail(email: string) {
  return email.trim().toLowerCase();
}

export async function findUserByEmail(db: Db, email: string) {
  return db
    .select()
    .from(users)
    .where(eq(users.email, normalizeEmail(email)))
    .get();
}

export async function listAccountUsers(db: Db, accountId: string) {
  return db.select().from(users).where(eq(users.accountId, accountId)).orderBy(asc(users.id)).all();
}

export type SignUp =
  | { ok: true; user: UserRow; key: string; accountId: string }
  | { ok: false; reason: "email_taken" };

/**
 * A new customer: the account with its webhook secret and default key (createAccount, as the admin API makes
 * it) and its owner, in one batch. The sign-up credits are only promised (`pending_credits`): the ledger grants
 * them when the email is verified (src/users/verification.ts), so an address nobody reads gets a key with no
 * credits. A second sign-up with the same email loses on the unique index and leaves nothing behind.
 */
export async function signUp(
  db: Db,
  input: { email: string; password: string; credits: number },
  now: number,
): Promise<SignUp> {
  const email = normalizeEmail(input.email);
  if (await findUserByEmail(db, email)) return { ok: false, reason: "email_taken" };
  const passwordHash = await hashPassword(input.password);
  const user: UserRow = {
    id: ulid(now),
    accountId: "",
    role: "owner",
    email,
    passwordHash,
    emailVerifiedAt: null,
    pendingCredits: input.credits,
    createdAt: now,
  };
  try {
    const created = await createAccount(db, { name: email, credits: 0 }, now, (accountId) => {
      user.accountId = accountId;
      return [db.insert(users).values(user)];
    });
    return { ok: true, user, key: created.key, accountId: created.account.id };
  } catch (error) {
    if (String((error as Error).cause ?? error).includes("UNIQUE constraint failed: users.email")) {
      return { ok: false, reason: "email_taken" };
    }
    throw error;
  }
}

export type SignIn =
  | { ok: true; user: UserRow }
  /** Wrong email or password; `level` is the challenge the next attempt must pass (0: none). */
  | { ok: false; reason: "invalid"; level: number }
  /** A challenge of `level` is due and `passes` did not vouch for one: nothing else was checked or counted. */
  | { ok: false; reason: "challenge"; level: number };

/**
 * Email and password (docs/console.md "Throttles"). While the failures counted against this client and email,
 * this email from anywhere, or this client across emails (src/users/throttle.ts) are past their thresholds, a
 * challenge of the level they imply must be passed first (`passes`, the page's check of the widget's answer);
 * without it nothing is checked or counted. Otherwise an unknown email costs the same hash as a wrong password
 * and gets the same answer, and each failure counts against all three. Never refused outright: the right
 * password with a solved challenge signs in, whatever strangers did.
 */
export async function signIn(
  db: Db,
  env: Env,
  input: {
    email: string;
    password: string;
    clientAddress: string;
    passes: (level: number) => Promise<boolean>;
  },
  now: number,
): Promise<SignIn> {
  const email = normalizeEmail(input.email);
  const subjects = signInSubjects(email, input.clientAddress);
  const level = await challengeLevel(env, subjects, now);
  if (level > 0 && !(await input.passes(level))) return { ok: false, reason: "challenge", level };

  const user = await findUserByEmail(db, email);
  const matches = user?.passwordHash
    ? await verifyPassword(input.password, user.passwordHash)
    : await verifyAgainstDummy(input.password);
  if (!user || !matches) {
    await recordSignInFailure(env, subjects, now);
    return { ok: false, reason: "invalid", level: await challengeLevel(env, subjects, now) };
  }
  if (user.passwordHash && needsRehash(user.passwordHash)) {
    await setPassword(db, user.id, input.password);
  }
  return { ok: true, user };
}

export async function setPassword(db: Db, userId: string, password: string) {
  await db
    .update(users)
    .set({ passwordHash: await hashPassword(password) })
    .where(eq(users.id, userId));
}

/** Whether `password` is the user's current one (for changing it). */
export async function checkPassword(user: UserRow, password: string) {
  return user.passwordHash ? verifyPassword(password, user.passwordHash) : verifyAgainstDummy(password);
}
