import { digestsEqual } from "../auth/token";
import type { Db } from "../db/client";
import { isSessionToken, openOperatorSession, startSession } from "../sessions/store";
import { base64UrlDecode, bytesToBase64, bytesToHex } from "../util/encoding";

/**
 * A signed-in operator ("session": a row of the sessions table, `id` its stored id) or the sign-in form's
 * pre-session ("login": stateless, the cookie is the session, signed with a key derived from ADMIN_TOKEN).
 */
export type Session = { kind: "session" | "login"; id: string; expiresAt: number };

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

/**
 * The stored id of an operator session's token: HMAC-SHA256 under the key derived from ADMIN_TOKEN. A read of the
 * table signs no one in (nor helps guess ADMIN_TOKEN: the token is random), and a new ADMIN_TOKEN finds none of
 * the sessions started with the old one, so changing it signs every operator out.
 */
export async function operatorSessionId(adminToken: string, token: string) {
  return bytesToHex(await hmac(await signingKey(adminToken), `operator-session.${token}`));
}

const signedIn = (row: { id: string; expiresAt: number }): Session => ({
  kind: "session",
  id: row.id,
  expiresAt: row.expiresAt,
});

/** Signs an operator in: a new row in the sessions table, and the token for the cookie. */
export async function startOperatorSession(db: Db, adminToken: string, now: number) {
  const { token, row } = await startSession(db, { kind: "operator" }, now, (t) =>
    operatorSessionId(adminToken, t),
  );
  return { token, session: signedIn(row) };
}

/** The live operator session of a cookie's token, or null (malformed, unknown, signed out, expired, idle). */
export async function findOperatorSession(
  db: Db,
  adminToken: string,
  token: string | undefined,
  now: number,
): Promise<Session | null> {
  if (!isSessionToken(token)) return null;
  const row = await openOperatorSession(db, await operatorSessionId(adminToken, token), now);
  return row ? signedIn(row) : null;
}

export function newLoginSession(now: number): Session {
  const id = toBase64Url(crypto.getRandomValues(new Uint8Array(18)));
  return { kind: "login", id, expiresAt: now + LOGIN_TTL_MS };
}

/** `<base64url payload>.<base64url HMAC>`: the payload is readable but any change breaks the signature. */
export async function sealSession(adminToken: string, session: Session): Promise<string> {
  const payload = toBase64Url(
    encoder.encode(JSON.stringify({ k: session.kind, i: session.id, e: session.expiresAt })),
  );
  const mac = await hmac(await signingKey(adminToken), `v1.${payload}`);
  return `${payload}.${toBase64Url(mac)}`;
}

/** The pre-session a cookie value stands for, or null: malformed, forged, signed with another token, expired. */
export async function openLoginSession(
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
  if (fields.k !== "login" || typeof fields.i !== "string") return null;
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
