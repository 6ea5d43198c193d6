import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hashSecret } from "../../src/auth/token";
import {
  createSession,
  openSession,
  purgeExpiredSessions,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
} from "../../src/sessions/store";
import { signIn, signUp } from "../../src/users/service";
import { SIGN_IN_WINDOW_SECONDS } from "../../src/users/throttle";
import { csrfOf, DashboardClient } from "../dashboard/client";
import { ADMIN_TOKEN, admin, db } from "../helpers/api";
import { newEmail, PASSWORD, signedUp, signInForm } from "./support";

const sessionCookie = (response: Response) =>
  response.headers.getSetCookie().find((cookie) => cookie.startsWith("p6_console="));

describe("console security", () => {
  it("refuses every form without its CSRF token, signed in or not", async () => {
    const client = new DashboardClient();
    await client.get("/console/sign-up");
    const signUp = await client.post("/console/sign-up", { email: newEmail(), password: PASSWORD });
    expect(signUp.status).toBe(403);
    const signIn = await client.post("/console/sign-in", { email: newEmail(), password: PASSWORD });
    expect(signIn.status).toBe(403);

    const { client: user } = await signedUp();
    for (const path of [
      "/console/keys",
      "/console/webhooks/reveal",
      "/console/webhooks/rotate",
      "/console/security/password",
      "/console/sign-out",
      "/console/sign-out-everywhere",
    ]) {
      const response = await user.post(path, { name: "x", scopes: "read" });
      expect(response.status, path).toBe(403);
      const wrong = await user.post(path, { _csrf: "forged", name: "x", scopes: "read" });
      expect(wrong.status, path).toBe(403);
    }
    // Still signed in: nothing above ran.
    expect((await user.get("/console")).status).toBe(200);
  });

  it("refuses a form with the right token sent from another site", async () => {
    const { client } = await signedUp();
    const token = csrfOf(await (await client.get("/console/keys")).text());
    const response = await client.post(
      "/console/keys",
      { _csrf: token, scopes: "read" },
      {
        headers: { Origin: "https://evil.example" },
      },
    );
    expect(response.status).toBe(403);
  });

  it("sets the session cookie HttpOnly, SameSite=Lax, Secure (not on localhost), for /console only", async () => {
    const { client, email } = await signedUp();
    await client.post("/console/sign-out", { _csrf: csrfOf(await (await client.get("/console")).text()) });
    const response = await signInForm(client, email, PASSWORD);
    expect(response.status).toBe(303);
    const cookie = sessionCookie(response)!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/Path=\/console/);

    const local = new DashboardClient("http://localhost:8787");
    const localSignUp = await local.submit("/console/sign-up", "/console/sign-up", {
      email: newEmail(),
      password: PASSWORD,
    });
    expect(localSignUp.status).toBe(201);
    const localCookie = sessionCookie(localSignUp);
    expect(localCookie).toMatch(/HttpOnly/);
    expect(localCookie).not.toMatch(/Secure/);
  });

  it("stores only the SHA-256 of session ids", async () => {
    const { client } = await signedUp();
    const token = client.cookies.get("p6_console")!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await env.DB.prepare("SELECT * FROM sessions").all();
    const dump = JSON.stringify(rows.results);
    expect(dump).not.toContain(token);
    expect(dump).toContain(await hashSecret(token));
  });

  it("answers an unknown email and a wrong password alike", async () => {
    const { email } = await signedUp();
    const answer = async (address: string) => {
      const response = await signInForm(new DashboardClient(), address, "not the right password");
      const text = await response.text();
      // The page differs only by its per-response values (token, nonce, request id, passkey challenge).
      const message = /role="alert">([^<]*)</.exec(text)?.[1];
      return { status: response.status, message, cookie: sessionCookie(response) };
    };
    const wrongPassword = await answer(email);
    const unknownEmail = await answer(newEmail());
    expect(wrongPassword.status).toBe(401);
    expect(unknownEmail).toEqual(wrongPassword);
    expect(wrongPassword.cookie).toBeUndefined();
  });

  it("refuses the 11th attempt in 15 minutes even with the right password, then lets it through", async () => {
    const { email } = await signedUp();
    const t0 = Date.now();
    const attempt = (password: string, now: number) =>
      signIn(db(), env, { email, password, clientAddress: `test-${email}` }, now);
    for (let i = 0; i < 10; i++) {
      expect(await attempt("wrong password number", t0 + i * 1000)).toEqual({ ok: false, reason: "invalid" });
    }
    const refused = await attempt(PASSWORD, t0 + 11_000);
    expect(refused).toMatchObject({ ok: false, reason: "throttled" });
    if (refused.ok || refused.reason !== "throttled") throw new Error("not throttled");
    expect(refused.retryAfterSeconds).toBeGreaterThan(14 * 60);
    // Just before the first failure leaves the window: still refused; just after: allowed.
    expect(await attempt(PASSWORD, t0 + (SIGN_IN_WINDOW_SECONDS - 2) * 1000)).toMatchObject({
      reason: "throttled",
    });
    expect(await attempt(PASSWORD, t0 + SIGN_IN_WINDOW_SECONDS * 1000 + 1000)).toMatchObject({ ok: true });
  });

  it("counts failures per client address too, across emails", async () => {
    const address = `client-${crypto.randomUUID()}`;
    const now = Date.now();
    for (let i = 0; i < 10; i++) {
      await signIn(db(), env, { email: newEmail(), password: "whatever it is", clientAddress: address }, now);
    }
    const { email } = await signedUp();
    expect(await signIn(db(), env, { email, password: PASSWORD, clientAddress: address }, now)).toMatchObject(
      {
        reason: "throttled",
      },
    );
  });

  it("shows a clear message when throttled", async () => {
    const { email } = await signedUp();
    const now = Date.now();
    for (let i = 0; i < 10; i++) {
      await signIn(db(), env, { email, password: "wrong password again", clientAddress: "elsewhere" }, now);
    }
    const response = await signInForm(new DashboardClient(), email, PASSWORD);
    expect(response.status).toBe(429);
    expect(await response.text()).toContain("Too many failed sign-ins. Try again in 15 minutes.");
  });

  it("never returns a password hash, on any page or API", async () => {
    const { client, email } = await signedUp();
    const user = await env.DB.prepare("SELECT * FROM users WHERE email = ?").bind(email.toLowerCase()).first<{
      password_hash: string;
      account_id: string;
    }>();
    expect(user!.password_hash).toMatch(/^\$scrypt\$ln=14,r=8,p=1\$/);
    const pages = [
      "/console",
      "/console/keys",
      "/console/webhooks",
      "/console/tasks",
      "/console/credits",
      "/console/security",
    ];
    const bodies = await Promise.all(pages.map(async (p) => (await client.get(p)).text()));
    const dashboard = new DashboardClient();
    const login = await dashboard.submit("/dashboard/login", "/dashboard/login", { token: ADMIN_TOKEN });
    expect(login.status).toBe(303);
    bodies.push(await (await dashboard.get(`/dashboard/accounts/${user!.account_id}`)).text());
    bodies.push(await (await admin(`/admin/v1/accounts/${user!.account_id}`)).text());
    expect(bodies.at(-2)).toContain(email.toLowerCase());
    const hashPart = user!.password_hash.split("$").at(-1)!;
    for (const body of bodies) {
      expect(body).not.toContain(hashPart);
      expect(body).not.toContain("$scrypt$");
    }
  });

  it("ends a session after its idle period, and at its absolute expiry however active; purges both", async () => {
    const t0 = Date.now();
    const created = await signUp(db(), { email: newEmail(), password: PASSWORD, credits: 0 }, t0);
    if (!created.ok) throw new Error("sign-up failed");
    const userId = created.user.id;

    const idle = await createSession(db(), userId, t0);
    expect(await openSession(db(), idle.token, t0 + SESSION_IDLE_MS - 1)).not.toBeNull();
    expect(await openSession(db(), idle.token, t0 + 2 * SESSION_IDLE_MS)).toBeNull();

    const busy = await createSession(db(), userId, t0);
    let now = t0;
    while (now + SESSION_IDLE_MS / 2 < t0 + SESSION_ABSOLUTE_MS) {
      now += SESSION_IDLE_MS / 2;
      expect(await openSession(db(), busy.token, now)).not.toBeNull();
    }
    expect(await openSession(db(), busy.token, t0 + SESSION_ABSOLUTE_MS)).toBeNull();

    await purgeExpiredSessions(db(), t0 + SESSION_ABSOLUTE_MS);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM sessions WHERE user_id = ?")
      .bind(userId)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
  });
});
