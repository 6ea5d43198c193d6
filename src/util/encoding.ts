/**
 * Encodings, on Hono's own base64 utilities (hono/utils/encode) rather than hand-written loops; hex, which
 * Hono does not export, stays here.
 */
import { decodeBase64, decodeBase64Url, encodeBase64, encodeBase64Url } from "hono/utils/encode";

export function bytesToHex(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
  return out;
}

/** Standard base64 with padding. `slice()`: Hono takes an ArrayBuffer, and a view may be part of a larger one. */
export function bytesToBase64(bytes: Uint8Array): string {
  return encodeBase64(bytes.slice().buffer);
}

export function base64ToBytes(text: string): Uint8Array {
  return decodeBase64(text);
}

/** base64url of bytes, without padding (tokens, cookies). */
export function bytesToBase64Url(bytes: Uint8Array): string {
  return encodeBase64Url(bytes.slice().buffer).replace(/=+$/, "");
}

/** Bytes of base64url (padding optional); throws on anything else. */
export function base64UrlToBytes(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(text)) throw new Error("not base64url");
  return decodeBase64Url(text);
}

/** base64url of the UTF-8 bytes of `text`, without padding. */
export function base64UrlEncode(text: string): string {
  return encodeBase64Url(new TextEncoder().encode(text).buffer).replace(/=+$/, "");
}

/** Decodes base64url (padding optional) to text; null when the input is not valid base64url or UTF-8. */
export function base64UrlDecode(text: string): string | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(decodeBase64Url(text));
  } catch {
    return null;
  }
}
