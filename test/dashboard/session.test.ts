import { describe, expect, it } from "vitest";
import {
  csrfToken,
  csrfTokenMatches,
  newSession,
  openSession,
  SESSION_TTL_MS,
  sealSession,
} from "../../src/dashboard/session";
import { base64UrlEncode } from "../../src/util/encoding";

const TOKEN = "admin-token-1";
const now = Date.now();

describe("session cookie", () => {
  it("opens what it sealed, until it expires", async () => {
    const session = newSession("session", now);
    expect(session.expiresAt).toBe(now + SESSION_TTL_MS);
    const sealed = await sealSession(TOKEN, session);
    expect(await openSession(TOKEN, sealed, now)).toEqual(session);
    expect(await openSession(TOKEN, sealed, session.expiresAt - 1)).toEqual(session);
    expect(await openSession(TOKEN, sealed, session.expiresAt)).toBeNull();
  });

  it("sessions have distinct random ids", () => {
    const ids = new Set(Array.from({ length: 50 }, () => newSession("session", now).id));
    expect(ids.size).toBe(50);
  });

  it("a new ADMIN_TOKEN invalidates every session", async () => {
    const sealed = await sealSession(TOKEN, newSession("session", now));
    expect(await openSession("admin-token-2", sealed, now)).toBeNull();
  });

  it.each([
    ["empty", ""],
    ["no signature", "abc"],
    ["three parts", "a.b.c"],
    ["not base64url", "!!!.???"],
    ["oversized", "a".repeat(600)],
  ])("refuses a malformed value (%s)", async (_name, value) => {
    expect(await openSession(TOKEN, value, now)).toBeNull();
  });

  it("refuses a changed payload (a later expiry) with the original signature", async () => {
    const session = newSession("session", now);
    const [, mac] = (await sealSession(TOKEN, session)).split(".");
    const payload = base64UrlEncode(
      JSON.stringify({ k: "session", i: session.id, e: now + 10 * SESSION_TTL_MS }),
    );
    expect(await openSession(TOKEN, `${payload}.${mac}`, now)).toBeNull();
  });

  it("refuses a signature that is off by one character", async () => {
    const sealed = await sealSession(TOKEN, newSession("session", now));
    const flipped = sealed.slice(0, -1) + (sealed.endsWith("A") ? "B" : "A");
    expect(await openSession(TOKEN, flipped, now)).toBeNull();
  });
});

describe("CSRF token", () => {
  it("is bound to the session and to the token", async () => {
    const a = newSession("session", now);
    const b = newSession("session", now);
    const token = await csrfToken(TOKEN, a);
    expect(await csrfTokenMatches(TOKEN, a, token)).toBe(true);
    expect(await csrfTokenMatches(TOKEN, b, token)).toBe(false);
    expect(await csrfTokenMatches("admin-token-2", a, token)).toBe(false);
    expect(await csrfTokenMatches(TOKEN, a, undefined)).toBe(false);
    expect(await csrfTokenMatches(TOKEN, a, "")).toBe(false);
    expect(await csrfTokenMatches(TOKEN, a, [token])).toBe(false);
  });

  it("a pre-sign-in token is not a session token", async () => {
    const login = { ...newSession("login", now) };
    const session = { ...login, kind: "session" as const };
    expect(await csrfToken(TOKEN, login)).not.toBe(await csrfToken(TOKEN, session));
  });
});
