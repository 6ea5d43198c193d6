import { ulid } from "ulid";
import { bytesToHex } from "../util/encoding";

/** p6_<26-char ULID>:<64 hex>. Crockford base32 for the ULID, lowercase or uppercase hex. */
const TOKEN = /^p6_([0-9A-HJKMNP-TV-Z]{26}):([0-9a-fA-F]{64})$/;

export type ParsedToken = { keyId: string; secret: string };

export function parseToken(token: string): ParsedToken | null {
  const match = TOKEN.exec(token);
  if (!match) return null;
  return { keyId: match[1]!, secret: match[2]!.toLowerCase() };
}

export async function hashSecret(secret: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret));
  return bytesToHex(new Uint8Array(digest));
}

/**
 * Constant-time equality of two digests (hex strings of equal length). Written out rather than using
 * workerd's crypto.subtle.timingSafeEqual so the same code also runs in Node (tests, tooling).
 */
export function digestsEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** A new key: 256 random bits of secret; the caller stores only the hash. */
export async function generateApiKey() {
  const keyId = ulid();
  const secret = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
  return { keyId, key: `p6_${keyId}:${secret}`, secretHash: await hashSecret(secret) };
}

/** A key's whole id as pages show it (`p6_<key_id>`): keys made in the same instant share the masked form. */
export const keyLabel = (keyId: string) => `p6_${keyId}`;

/** The masked form the admin API's listings carry (`prefix`): p6_<first 8 of key_id>... */
export function maskKey(keyId: string) {
  return `p6_${keyId.slice(0, 8)}...`;
}
