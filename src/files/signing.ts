import { digestsEqual } from "../auth/token";
import { bytesToHex } from "../util/encoding";

const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string) {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    keys.set(secret, key);
  }
  return key;
}

/** Hex HMAC-SHA256 of `message` under `secret` (the key imported once per secret). */
export async function hmacHex(secret: string, message: string) {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), new TextEncoder().encode(message));
  return bytesToHex(new Uint8Array(mac));
}

const signature = (secret: string, fileId: string, name: string, expires: number) =>
  hmacHex(secret, `${fileId}/${name}:${expires}`);

/** /files/{file_id}/{name}?expires=<unix s>&signature=<hex HMAC-SHA256>, absolute on the service's origin. */
export async function signFileUrl(
  origin: string,
  secret: string,
  fileId: string,
  name: string,
  expiresAtMs: number,
) {
  const expires = Math.floor(expiresAtMs / 1000);
  const sig = await signature(secret, fileId, name, expires);
  return `${origin}/files/${fileId}/${encodeURIComponent(name)}?expires=${expires}&signature=${sig}`;
}

export async function verifyFileSignature(
  secret: string,
  fileId: string,
  name: string,
  expires: number,
  presented: string,
): Promise<boolean> {
  return digestsEqual(await signature(secret, fileId, name, expires), presented.toLowerCase());
}
