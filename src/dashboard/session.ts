import { digestsEqual } from "../auth/token";
import { base64UrlDecode, bytesToBase64 } from "../util/encoding";

/** A signed-in operator. Stateless: the cookie is the session, signed with a key derived from ADMIN_TOKEN. */
export type Session = { kind: "session" | "login"; id: string; expiresAt: number };

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** The pre-sign-in token that protects the sign-in form itself (login CSRF). */
export const LOGIN_TTL_MS = 30 * 60 * 1000;

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

const toBase64Url = (bytes: Uint8Array) =>
  bytesToBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

async function hmac(key: CryptoKey, data: string) {
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(data)));
}

/**
 * HMAC(ADMIN_TOKEN, "dashboard-session") as the signing key: a new ADMIN_TOKEN invalidates every session and
 * CSRF token, and the token itself never signs anything a browser can see.
 */
function signingKey(adminToken: string): Promise<CryptoKey> {
  let key = keys.get(adminToken);
  if (!key) {
    key = (async () => {
      const root = await crypto.subtle.importKey(
        "raw",
        encoder.encode(adminToken),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"],
      );
      const derived = await hmac(root, "dashboard-session");
      return crypto.subtle.importKey("raw", derived, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    })();
    if (keys.size > 8) keys.clear();
    keys.set(adminToken, key);
  }
  return key;
}

export function newSession(kind: Session["kind"], now: number): Session {
  const id = toBase64Url(crypto.getRandomValues(new Uint8Array(18)));
  return { kind, id, expiresAt: now + (kind === "session" ? SESSION_TTL_MS : LOGIN_TTL_MS) };
}

/** `<base64url payload>.<base64url HMAC>`: the payload is readable but any change breaks the signature. */
export async function sealSession(adminToken: string, session: Session): Promise<string> {
  const payload = toBase64Url(
    encoder.encode(JSON.stringify({ k: session.kind, i: session.id, e: session.expiresAt })),
  );
  const mac = await hmac(await signingKey(adminToken), `v1.${payload}`);
  return `${payload}.${toBase64Url(mac)}`;
}

/** The session a cookie value stands for, or null: malformed, forged, signed with another token, or expired. */
export async function openSession(
  adminToken: string,
  value: string | undefined,
  now: number,
): Promise<Session | null> {
  if (!value || value.length > 512) return null;
  const [payload, mac, ...rest] = value.split(".");
  if (!payload || !mac || rest.length > 0) return null;
  const expected = toBase64Url(await hmac(await signingKey(adminToken), `v1.${payload}`));
  if (!digestsEqual(mac, expected)) return null;
  const text = base64UrlDecode(payload);
  if (text === null) return null;
  let fields: { k?: unknown; i?: unknown; e?: unknown };
  try {
    fields = JSON.parse(text) as typeof fields;
  } catch {
    return null;
  }
  if ((fields.k !== "session" && fields.k !== "login") || typeof fields.i !== "string") return null;
  if (typeof fields.e !== "number" || fields.e <= now) return null;
  return { kind: fields.k, id: fields.i, expiresAt: fields.e };
}

/** The CSRF token of a session: bound to its id, so it is useless with any other session. */
export async function csrfToken(adminToken: string, session: Session): Promise<string> {
  return toBase64Url(await hmac(await signingKey(adminToken), `csrf.${session.kind}.${session.id}`));
}

export async function csrfTokenMatches(adminToken: string, session: Session, presented: unknown) {
  if (typeof presented !== "string" || presented.length > 128) return false;
  return digestsEqual(presented, await csrfToken(adminToken, session));
}
