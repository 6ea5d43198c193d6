import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { base64UrlToBytes, bytesToBase64Url } from "../util/encoding";
import type { ConsoleEnv } from "./context";
import { cookieOptions, SESSION_COOKIE } from "./session";

/**
 * What a POST hands to the page it redirects to (Post/Redirect/Get), when that is more than a `?done=` word:
 * a key just created, or why a resend was refused (with the task id typed), shown once. It never travels in a
 * URL. It is sealed (AES-GCM) under a key derived from
 * the session's own token, which only this browser holds and the server does not store (only its SHA-256),
 * and kept in an HttpOnly cookie for two minutes; the next page opens it once and deletes it. Without the
 * session cookie it cannot be opened, by the server included.
 */
export type Flash =
  | { kind: "key"; keyId: string; key: string }
  | { kind: "welcome"; keyId: string; key: string; credits: number }
  | { kind: "resend-refused"; taskId: string; message: string };

export const FLASH_COOKIE = "p6_console_flash";
const FLASH_TTL_S = 120;

type Ctx = Context<ConsoleEnv>;

async function sealingKey(sessionToken: string) {
  const material = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`console-flash.${sessionToken}`),
  );
  return crypto.subtle.importKey("raw", material, "AES-GCM", false, ["encrypt", "decrypt"]);
}

/** Seals `flash` for the page after the redirect; `sessionToken` is the cookie's (new, on sign-up) token. */
export async function setFlash(c: Ctx, sessionToken: string, flash: Flash) {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    await sealingKey(sessionToken),
    new TextEncoder().encode(JSON.stringify(flash)),
  );
  setCookie(
    c,
    FLASH_COOKIE,
    `${bytesToBase64Url(iv)}.${bytesToBase64Url(new Uint8Array(sealed))}`,
    cookieOptions(c, FLASH_TTL_S),
  );
}

/** The flash left for this page, once: the cookie is deleted whether or not it opens. */
export async function takeFlash(c: Ctx): Promise<Flash | undefined> {
  const value = getCookie(c, FLASH_COOKIE);
  if (value === undefined) return undefined;
  deleteCookie(c, FLASH_COOKIE, cookieOptions(c));
  const token = getCookie(c, SESSION_COOKIE);
  const [iv, sealed] = value.split(".");
  if (!token || !iv || !sealed || value.length > 2048) return undefined;
  try {
    const opened = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: base64UrlToBytes(iv) },
      await sealingKey(token),
      base64UrlToBytes(sealed),
    );
    return JSON.parse(new TextDecoder().decode(opened)) as Flash;
  } catch {
    return undefined; // another session's, tampered with, or malformed
  }
}
