import { addressRange } from "@p6/contract/address-policy";
import { hashSecret } from "../auth/token";
import { bytesToBase64Url } from "../util/encoding";

/**
 * Direct (browser) uploads: the one-time URL's credential and the origin it answers. docs/decisions.md
 * "Direct uploads". Pure functions; the grant itself lives in the upload's Durable Object.
 */

/** `<upload id>.<43 base64url characters: 256 random bits>`: the id names the object, the secret opens it. */
const TOKEN = /^([0-9A-HJKMNP-TV-Z]{26})\.([A-Za-z0-9_-]{43})$/;

export async function newDirectToken(id: string) {
  const secret = bytesToBase64Url(crypto.getRandomValues(new Uint8Array(32)));
  return { token: `${id}.${secret}`, secretHash: await hashSecret(secret) };
}

/** The upload id and the secret's hash of a token, or null for anything not shaped like ours. */
export async function parseDirectToken(token: string) {
  const match = TOKEN.exec(token);
  if (!match) return null;
  return { id: match[1]!, secretHash: await hashSecret(match[2]!) };
}

/** The path of a direct URL (creation); its upload's path (HEAD, PATCH) adds `/upload`. */
export const directPath = (token: string) => `/v1/direct-uploads/${token}`;

const LOOPBACK_NAMES = /^(localhost|[^.]+\.localhost)$/;

function isLoopbackHost(hostname: string) {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (LOOPBACK_NAMES.test(host)) return true;
  try {
    return /^loopback$|\(loopback\)$/.test(addressRange(host));
  } catch {
    return false;
  }
}

/**
 * `cors_origin` as a browser sends Origin: scheme, host and port only (a trailing slash is dropped), https —
 * or http on a loopback host when `allowPrivate` (ALLOW_PRIVATE_SOURCES, local development). Returns the
 * origin in the form browsers send it (lowercase host, no default port), or the reason it is refused.
 */
export function parseCorsOrigin(
  value: string,
  allowPrivate: boolean,
): { ok: true; origin: string } | { ok: false; reason: string } {
  const refused = (reason: string) => ({ ok: false as const, reason });
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return refused("is not an origin (scheme://host[:port])");
  }
  if (url.username || url.password || url.search || url.hash || url.pathname !== "/" || /[?#@]/.test(value))
    return refused("must be an origin alone: scheme, host and port, no path, query or credentials");
  if (url.protocol === "https:") return { ok: true, origin: url.origin };
  if (url.protocol === "http:" && allowPrivate && isLoopbackHost(url.hostname))
    return { ok: true, origin: url.origin };
  return refused(allowPrivate ? "must be https (or http on a loopback host)" : "must be an https origin");
}
