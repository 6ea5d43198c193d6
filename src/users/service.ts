import { asc, eq } from "drizzle-orm";
import { ulid } from "ulid";
import { createAccount } from "../accounts/service";
import type { Db } from "../db/client";
import { type UserRow, users } from "../db/schema";
import { hashPassword, needsRehash, verifyAgainstDummy, verifyPassword } from "./password";
import { recordFailure, signInChecks, throttleState } from "./throttle";

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

export async function getUser(db: Db, id: string) {
  return db.select().from(users).where(eq(users.id, id)).get();
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
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "throttled"; retryAfterSeconds: number };

/**
 * Email and password. Refused without checking anything while this address has 10 failures for this email in
 * the last 15 minutes, the email 30 in the last hour from anywhere, or the address 100 across emails
 * (src/users/throttle.ts); otherwise an unknown email costs the same hash as a wrong password and gets the same
 * answer. Each failure counts against all three.
 */
export async function signIn(
  db: Db,
  env: Env,
  input: { email: string; password: string; clientAddress: string },
  now: number,
): Promise<SignIn> {
  const email = normalizeEmail(input.email);
  const subjects = signInChecks(email, input.clientAddress);
  const throttle = await throttleState(env, subjects, now);
  if (throttle.blocked)
    return { ok: false, reason: "throttled", retryAfterSeconds: throttle.retryAfterSeconds };

  const user = await findUserByEmail(db, email);
  const matches = user?.passwordHash
    ? await verifyPassword(input.password, user.passwordHash)
    : await verifyAgainstDummy(input.password);
  if (!user || !matches) {
    await recordFailure(env, subjects, now);
    return { ok: false, reason: "invalid" };
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
