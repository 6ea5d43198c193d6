import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { type PasskeyRow, passkeys, type UserRow, users } from "../db/schema";
import { base64ToBytes, bytesToBase64 } from "../util/encoding";

/** The relying party: this host, as the browser sees it (so it works on any deployment and on localhost). */
export type RelyingParty = { id: string; origin: string };

export const MAX_PASSKEYS = 20;

const toBase64Url = (bytes: Uint8Array) =>
  bytesToBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const fromBase64Url = (text: string) =>
  base64ToBytes(
    text
      .replace(/-/g, "+")
      .replace(/_/g, "/")
      .padEnd(Math.ceil(text.length / 4) * 4, "="),
  );

export async function listPasskeys(db: Db, userId: string) {
  return db.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(asc(passkeys.createdAt)).all();
}

/** Options for navigator.credentials.create; the caller keeps `challenge` for the answer. */
export async function registrationOptions(db: Db, rp: RelyingParty, user: UserRow) {
  const existing = await listPasskeys(db, user.id);
  return generateRegistrationOptions({
    rpName: "p6 media API",
    rpID: rp.id,
    userName: user.email,
    userID: new Uint8Array(new TextEncoder().encode(user.id)),
    attestationType: "none",
    excludeCredentials: existing.map((key) => ({ id: key.id, transports: splitTransports(key.transports) })),
    authenticatorSelection: { residentKey: "required", userVerification: "preferred" },
  });
}

const splitTransports = (text: string) => (text === "" ? undefined : text.split(","));

/** Verifies a new passkey's attestation against the challenge and stores it; false when it does not verify. */
export async function addPasskey(
  db: Db,
  rp: RelyingParty,
  user: UserRow,
  input: { response: RegistrationResponseJSON; challenge: string; name: string },
  now: number,
) {
  if ((await listPasskeys(db, user.id)).length >= MAX_PASSKEYS) return false;
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verification = await verifyRegistrationResponse({
      response: input.response,
      expectedChallenge: input.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    });
  } catch {
    return false;
  }
  if (!verification.verified) return false;
  const { credential } = verification.registrationInfo;
  await db
    .insert(passkeys)
    .values({
      id: credential.id,
      userId: user.id,
      publicKey: toBase64Url(credential.publicKey),
      counter: credential.counter,
      transports: (credential.transports ?? []).join(","),
      name: input.name,
      createdAt: now,
      lastUsedAt: null,
    })
    .onConflictDoNothing();
  return true;
}

export async function removePasskey(db: Db, userId: string, id: string) {
  const removed = await db
    .delete(passkeys)
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, userId)))
    .returning({ id: passkeys.id });
  return removed.length > 0;
}

/** Options for navigator.credentials.get: any passkey of this site (discoverable), chosen by the user. */
export function authenticationOptions(rp: RelyingParty) {
  return generateAuthenticationOptions({ rpID: rp.id, userVerification: "preferred" });
}

/**
 * The user a passkey assertion signs in, or null: unknown credential, wrong challenge, origin or signature, or
 * a counter that went backwards (a cloned authenticator).
 */
export async function signInWithPasskey(
  db: Db,
  rp: RelyingParty,
  input: { response: AuthenticationResponseJSON; challenge: string },
  now: number,
): Promise<UserRow | null> {
  if (typeof input.response.id !== "string" || input.response.id.length > 1024) return null;
  const found = await db
    .select({ passkey: passkeys, user: users })
    .from(passkeys)
    .innerJoin(users, eq(users.id, passkeys.userId))
    .where(eq(passkeys.id, input.response.id))
    .get();
  if (!found) return null;
  const key: PasskeyRow = found.passkey;
  let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verification = await verifyAuthenticationResponse({
      response: input.response,
      expectedChallenge: input.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: key.id,
        publicKey: new Uint8Array(fromBase64Url(key.publicKey)),
        counter: key.counter,
        transports: splitTransports(key.transports) as never,
      },
      requireUserVerification: false,
    });
  } catch {
    return null;
  }
  if (!verification.verified) return null;
  await db
    .update(passkeys)
    .set({ counter: verification.authenticationInfo.newCounter, lastUsedAt: now })
    .where(eq(passkeys.id, key.id));
  return found.user;
}
