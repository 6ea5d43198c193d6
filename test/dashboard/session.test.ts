import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  csrfToken,
  csrfTokenMatches,
  findOperatorSession,
  LOGIN_TTL_MS,
  newLoginSession,
  openLoginSession,
  operatorSessionId,
  sealSession,
  startOperatorSession,
} from "../../src/dashboard/session";
import { purgeExpiredSessions, SESSION_LIFETIMES } from "../../src/sessions/store";
import { base64UrlEncode } from "../../src/util/encoding";
import { db } from "../helpers/api";

const TOKEN = "admin-token-1";
const now = Date.now();
const { absoluteMs, idleMs } = SESSION_LIFETIMES.operator;

async function stored(adminToken: string, token: string) {
  const row = await env.DB.prepare("SELECT * FROM sessions WHERE id = ?")
    .bind(await operatorSessionId(adminToken, token))
    .first();
  return row;
}

describe("operator session (a row of the sessions table)", () => {
  it("lives 12 h at most and ends after an hour without a request", () => {
    expect(absoluteMs).toBe(12 * 60 * 60 * 1000);
    expect(idleMs).toBe(60 * 60 * 1000);
  });

  it("opens while live; the cookie's token is stored only as an HMAC keyed by ADMIN_TOKEN", async () => {
    const { token, session } = await startOperatorSession(db(), TOKEN, now);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session).toMatchObject({ kind: "session", expiresAt: now + absoluteMs });
    expect(session.id).toBe(await operatorSessionId(TOKEN, token));
    expect(session.id).not.toContain(token);
    expect(await stored(TOKEN, token)).toMatchObject({ kind: "operator", user_id: null, created_at: now });
    expect(await findOperatorSession(db(), TOKEN, token, now)).toEqual(session);
  });

  it("ends after its idle period, and at its absolute expiry however active", async () => {
    const idle = await startOperatorSession(db(), TOKEN, now);
    expect(await findOperatorSession(db(), TOKEN, idle.token, now + idleMs - 1)).not.toBeNull();
    expect(await findOperatorSession(db(), TOKEN, idle.token, now + 2 * idleMs)).toBeNull();

    const busy = await startOperatorSession(db(), TOKEN, now);
    let t = now;
    while (t + idleMs / 2 < now + absoluteMs) {
      t += idleMs / 2;
      expect(await findOperatorSession(db(), TOKEN, busy.token, t)).not.toBeNull();
    }
    expect(await findOperatorSession(db(), TOKEN, busy.token, now + absoluteMs)).toBeNull();

    // The minutely purge deletes both by their kind's own limits; a user's 3-day idle period does not apply.
    await purgeExpiredSessions(db(), now + absoluteMs);
    expect(await stored(TOKEN, idle.token)).toBeNull();
    expect(await stored(TOKEN, busy.token)).toBeNull();
  });

  it("the purge keeps a live operator session", async () => {
    const { token } = await startOperatorSession(db(), TOKEN, now);
    await purgeExpiredSessions(db(), now + idleMs - 1);
    expect(await findOperatorSession(db(), TOKEN, token, now + idleMs - 1)).not.toBeNull();
  });

  it("a new ADMIN_TOKEN finds none of the old sessions", async () => {
    const { token } = await startOperatorSession(db(), TOKEN, now);
    expect(await findOperatorSession(db(), "admin-token-2", token, now)).toBeNull();
  });

  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["too short", "abc"],
    ["not base64url", "!".repeat(43)],
    ["oversized", "a".repeat(600)],
  ])("refuses a malformed token (%s)", async (_name, value) => {
    expect(await findOperatorSession(db(), TOKEN, value, now)).toBeNull();
  });

  it("sessions have distinct random tokens", async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 20; i++) tokens.add((await startOperatorSession(db(), TOKEN, now)).token);
    expect(tokens.size).toBe(20);
  });
});

describe("sign-in form's pre-session cookie (signed, stateless)", () => {
  it("opens what it sealed, until it expires", async () => {
    const session = newLoginSession(now);
    expect(session.expiresAt).toBe(now + LOGIN_TTL_MS);
    const sealed = await sealSession(TOKEN, session);
    expect(await openLoginSession(TOKEN, sealed, now)).toEqual(session);
    expect(await openLoginSession(TOKEN, sealed, session.expiresAt - 1)).toEqual(session);
    expect(await openLoginSession(TOKEN, sealed, session.expiresAt)).toBeNull();
  });

  it("pre-sessions have distinct random ids", () => {
    const ids = new Set(Array.from({ length: 50 }, () => newLoginSession(now).id));
    expect(ids.size).toBe(50);
  });

  it("a new ADMIN_TOKEN invalidates every pre-session", async () => {
    const sealed = await sealSession(TOKEN, newLoginSession(now));
    expect(await openLoginSession("admin-token-2", sealed, now)).toBeNull();
  });

  it("a signed cookie of another kind is not a pre-session", async () => {
    const sealed = await sealSession(TOKEN, { kind: "session", id: "x", expiresAt: now + LOGIN_TTL_MS });
    expect(await openLoginSession(TOKEN, sealed, now)).toBeNull();
  });

  it.each([
    ["empty", ""],
    ["no signature", "abc"],
    ["three parts", "a.b.c"],
    ["not base64url", "!!!.???"],
    ["oversized", "a".repeat(600)],
  ])("refuses a malformed value (%s)", async (_name, value) => {
    expect(await openLoginSession(TOKEN, value, now)).toBeNull();
  });

  it("refuses a changed payload (a later expiry) with the original signature", async () => {
    const session = newLoginSession(now);
    const [, mac] = (await sealSession(TOKEN, session)).split(".");
    const payload = base64UrlEncode(
      JSON.stringify({ k: "login", i: session.id, e: now + 10 * LOGIN_TTL_MS }),
    );
    expect(await openLoginSession(TOKEN, `${payload}.${mac}`, now)).toBeNull();
  });

  it("refuses a signature that is off by one character", async () => {
    const sealed = await sealSession(TOKEN, newLoginSession(now));
    const flipped = sealed.slice(0, -1) + (sealed.endsWith("A") ? "B" : "A");
    expect(await openLoginSession(TOKEN, flipped, now)).toBeNull();
  });
});

describe("CSRF token", () => {
  it("is bound to the session and to the token", async () => {
    const a = (await startOperatorSession(db(), TOKEN, now)).session;
    const b = (await startOperatorSession(db(), TOKEN, now)).session;
    const token = await csrfToken(TOKEN, a);
    expect(await csrfTokenMatches(TOKEN, a, token)).toBe(true);
    expect(await csrfTokenMatches(TOKEN, b, token)).toBe(false);
    expect(await csrfTokenMatches("admin-token-2", a, token)).toBe(false);
    expect(await csrfTokenMatches(TOKEN, a, undefined)).toBe(false);
    expect(await csrfTokenMatches(TOKEN, a, "")).toBe(false);
    expect(await csrfTokenMatches(TOKEN, a, [token])).toBe(false);
  });

  it("a pre-sign-in token is not a session token", async () => {
    const login = newLoginSession(now);
    const session = { ...login, kind: "session" as const };
    expect(await csrfToken(TOKEN, login)).not.toBe(await csrfToken(TOKEN, session));
  });
});
