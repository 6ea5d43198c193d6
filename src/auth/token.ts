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

/** Constant-time equality of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const encoder = new TextEncoder();
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  if (left.byteLength !== right.byteLength) return false;
  return crypto.subtle.timingSafeEqual(left, right);
}

/** A new key: 256 random bits of secret; the caller stores only the hash. */
export async function generateApiKey() {
  const keyId = ulid();
  const secret = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
  return { keyId, key: `p6_${keyId}:${secret}`, secretHash: await hashSecret(secret) };
}

/** The masked form shown in listings: p6_<first 8 of key_id>... */
export function maskKey(keyId: string) {
  return `p6_${keyId.slice(0, 8)}...`;
}
