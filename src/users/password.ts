import { scrypt as scryptCallback, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";
import { base64ToBytes, bytesToBase64 } from "../util/encoding";
import { estimateStrength, MIN_SCORE } from "./password-strength";

const scrypt = promisify(scryptCallback) as (
  password: string,
  salt: Uint8Array,
  length: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

export const MIN_PASSWORD_LENGTH = 12;
/** Bounds the work a single request can ask for (a password is hashed as given). */
export const MAX_PASSWORD_LENGTH = 256;

/**
 * scrypt, N = 2^14, r = 8, p = 1: 16 MiB of memory and about 35-40 ms of CPU per hash in workerd on this
 * machine (docs/console.md, `npm run bench` signin-hash). The parameters travel in each stored hash, so
 * raising them later re-hashes every user at their next sign-in (`needsRehash`).
 */
export const KDF = { logN: 14, r: 8, p: 1, saltBytes: 16, hashBytes: 32 } as const;
type Params = { logN: number; r: number; p: number };

/**
 * Why a new password is refused, or null when it is acceptable: the length rules, then zxcvbn's estimate
 * (src/users/password-strength.ts), whose warning and suggestions are what the form shows.
 */
export function passwordProblem(password: string, email?: string): string | null {
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    return `At least ${MIN_PASSWORD_LENGTH} characters.`;
  }
  if (password.length > MAX_PASSWORD_LENGTH) return `At most ${MAX_PASSWORD_LENGTH} characters.`;
  if (email && password.toLowerCase() === email.toLowerCase())
    return "The password cannot be the email address.";
  const strength = estimateStrength(password, email);
  if (strength.score >= MIN_SCORE) return null;
  const advice = [strength.warning ?? "This password would be easy to guess.", ...strength.suggestions];
  return `Too easy to guess. ${advice.join(" ")}`;
}

const b64 = (bytes: Uint8Array) => bytesToBase64(bytes).replace(/=+$/, "");

async function derive(password: string, salt: Uint8Array, params: Params, length: number) {
  return new Uint8Array(
    await scrypt(password.normalize("NFKC"), salt, length, {
      N: 2 ** params.logN,
      r: params.r,
      p: params.p,
      maxmem: 2 ** params.logN * params.r * 128 * 2,
    }),
  );
}

/** The PHC string of a password's hash: `$scrypt$ln=14,r=8,p=1$<salt>$<hash>` (base64, no padding). */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(KDF.saltBytes));
  const hash = await derive(password, salt, KDF, KDF.hashBytes);
  return `$scrypt$ln=${KDF.logN},r=${KDF.r},p=${KDF.p}$${b64(salt)}$${b64(hash)}`;
}

const PHC =
  /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]{16,64})\$([A-Za-z0-9+/]{32,128})$/;

function parse(phc: string) {
  const match = PHC.exec(phc);
  if (!match) return null;
  const params = { logN: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
  // Never let a stored string ask for more than a few times today's work.
  if (params.logN < 10 || params.logN > 17 || params.r < 1 || params.r > 16 || params.p < 1 || params.p > 4) {
    return null;
  }
  return { params, salt: base64ToBytes(match[4]!), hash: base64ToBytes(match[5]!) };
}

/** Whether `password` matches the stored PHC string (constant-time comparison; false for a malformed one). */
export async function verifyPassword(password: string, phc: string): Promise<boolean> {
  const stored = parse(phc);
  if (!stored) return false;
  const candidate = await derive(password, stored.salt, stored.params, stored.hash.length);
  return timingSafeEqual(candidate, stored.hash);
}

/** A stored hash made with other parameters than today's: re-hash it once the password is known. */
export function needsRehash(phc: string) {
  const stored = parse(phc);
  return !stored || stored.params.logN !== KDF.logN || stored.params.r !== KDF.r || stored.params.p !== KDF.p;
}

let dummy: Promise<string> | undefined;

/**
 * Verifies against a hash of a random password: for an unknown email, so that the answer takes as long as a
 * wrong password for a known one. Always false.
 */
export async function verifyAgainstDummy(password: string) {
  dummy ??= hashPassword(b64(crypto.getRandomValues(new Uint8Array(24))));
  await verifyPassword(password, await dummy);
  return false;
}
