import { base64ToBytes, bytesToBase64 } from "../util/encoding";

const SECRET_PREFIX = "whsec_";
const encoder = new TextEncoder();

/** The HMAC key of a whsec_<base64> secret (Standard Webhooks: the part after the prefix, base64-decoded). */
function keyBytes(secret: string): Uint8Array {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return base64ToBytes(encoded);
}

/** base64(HMAC-SHA256(key, "<msgId>.<timestampSec>.<body>")), interface.md "Signature" steps 1–3. */
export async function sign(
  secret: string,
  msgId: string,
  timestampSec: number,
  body: string,
): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    keyBytes(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(`${msgId}.${timestampSec}.${body}`));
  return bytesToBase64(new Uint8Array(mac));
}

/**
 * The webhook-signature header: one `v1,<base64>` token per active secret, space-separated, so a receiver
 * holding either the old or the new secret verifies during a rotation.
 */
export async function signatureHeader(
  secrets: string[],
  msgId: string,
  timestampSec: number,
  body: string,
): Promise<string> {
  const tokens = await Promise.all(
    secrets.map(async (secret) => `v1,${await sign(secret, msgId, timestampSec, body)}`),
  );
  return tokens.join(" ");
}
