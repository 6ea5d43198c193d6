import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hashSecret } from "../../src/auth/token";
import { clientKey } from "../../src/http/client-key";
import {
  createSession,
  openSession,
  purgeExpiredSessions,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
} from "../../src/sessions/store";
import { signIn, signUp } from "../../src/users/service";
import {
  recordFailure,
  SIGN_IN_ADDRESS,
  SIGN_IN_EMAIL,
  SIGN_IN_PAIR,
  SIGN_IN_WINDOW_SECONDS,
  signInChecks,
} from "../../src/users/throttle";
import { csrfOf, DashboardClient } from "../dashboard/client";
import { ADMIN_TOKEN, admin, db } from "../helpers/api";
import { clientAt, newEmail, PASSWORD, signedUp, signInForm } from "./support";

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
    local.defaults["CF-Connecting-IP"] = "2001:db8:1::1";
    const localSignUp = await local.submit("/console/sign-up", "/console/sign-up", {
      email: newEmail(),
      password: PASSWORD,
    });
    expect(localSignUp.status).toBe(303);
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

  it("refuses the 11th attempt from one address for one email, right password or not, then lets it through", async () => {
    const { email } = await signedUp();
    const t0 = Date.now();
    const address = `pair-${email}`;
    const attempt = (password: string, now: number, from = address) =>
      signIn(db(), env, { email, password, clientAddress: from }, now);
    for (let i = 0; i < 10; i++) {
      expect(await attempt("wrong password number", t0 + i * 1000)).toEqual({ ok: false, reason: "invalid" });
    }
    const refused = await attempt(PASSWORD, t0 + 11_000);
    expect(refused).toMatchObject({ ok: false, reason: "throttled" });
    if (refused.ok || refused.reason !== "throttled") throw new Error("not throttled");
    expect(refused.retryAfterSeconds).toBeGreaterThan(14 * 60);
    // The owner from another address is not refused.
    expect(await attempt(PASSWORD, t0 + 12_000, `${address}-home`)).toMatchObject({ ok: true });
    // Just before the first failure leaves the window: still refused; just after: allowed.
    expect(await attempt(PASSWORD, t0 + (SIGN_IN_WINDOW_SECONDS - 2) * 1000)).toMatchObject({
      reason: "throttled",
    });
    expect(await attempt(PASSWORD, t0 + SIGN_IN_WINDOW_SECONDS * 1000 + 1000)).toMatchObject({ ok: true });
  });

  it("one user's failures behind a shared address lock out neither the others there nor the user elsewhere", async () => {
    const nat = `nat-${crypto.randomUUID()}`;
    const [alice, bob] = [await signedUp(), await signedUp()];
    const now = Date.now();
    for (let i = 0; i < 12; i++) {
      await signIn(
        db(),
        env,
        { email: alice.email, password: "a wrong guess here", clientAddress: nat },
        now,
      );
    }
    const from = (email: string, clientAddress: string) =>
      signIn(db(), env, { email, password: PASSWORD, clientAddress }, now + 1000);
    expect(await from(alice.email, nat)).toMatchObject({ reason: "throttled" });
    expect(await from(bob.email, nat)).toMatchObject({ ok: true });
    expect(await from(alice.email, `${nat}-phone`)).toMatchObject({ ok: true });
  });

  it("per email, from every address: 30 failures in an hour refuse the password anywhere", async () => {
    const { email } = await signedUp();
    const t0 = Date.now();
    // Three addresses, 10 failures each: each pair is full, and so is the email's hour.
    for (let a = 0; a < SIGN_IN_EMAIL.limit / SIGN_IN_PAIR.limit; a++) {
      for (let i = 0; i < SIGN_IN_PAIR.limit; i++) {
        await signIn(
          db(),
          env,
          { email, password: "distributed guess", clientAddress: `bot-${a}-${email}` },
          t0,
        );
      }
    }
    const owner = (now: number) =>
      signIn(db(), env, { email, password: PASSWORD, clientAddress: `owner-${email}` }, now);
    const refused = await owner(t0 + 1000);
    expect(refused).toMatchObject({ reason: "throttled" });
    if (refused.ok || refused.reason !== "throttled") throw new Error("not throttled");
    expect(refused.retryAfterSeconds).toBeGreaterThan(55 * 60);
    expect(await owner(t0 + SIGN_IN_EMAIL.windowSeconds * 1000 + 1000)).toMatchObject({ ok: true });
  });

  it("per address across emails: 100 failures in 15 minutes (spraying), 99 do not", async () => {
    const address = `spray-${crypto.randomUUID()}`;
    const now = Date.now();
    const { email } = await signedUp();
    // 99 failures over 99 emails, recorded as signIn records them (each a hash is slow to repeat 99 times).
    for (let i = 0; i < SIGN_IN_ADDRESS.limit - 1; i++) {
      await recordFailure(env, signInChecks(newEmail(), address), now);
    }
    expect(await signIn(db(), env, { email, password: PASSWORD, clientAddress: address }, now)).toMatchObject(
      {
        ok: true,
      },
    );
    await signIn(db(), env, { email: newEmail(), password: "whatever it is", clientAddress: address }, now);
    expect(await signIn(db(), env, { email, password: PASSWORD, clientAddress: address }, now)).toMatchObject(
      {
        reason: "throttled",
      },
    );
  });

  it("shows a clear message when throttled, with the passkey sign-in still on the page", async () => {
    const { email } = await signedUp();
    const client = clientAt();
    const now = Date.now();
    for (let i = 0; i < 10; i++) {
      await signIn(
        db(),
        env,
        // The page counts a client by its throttle key (an IPv6 client by its /64).
        {
          email,
          password: "wrong password again",
          clientAddress: clientKey(client.defaults["CF-Connecting-IP"]),
        },
        now,
      );
    }
    const response = await signInForm(client, email, PASSWORD);
    expect(response.status).toBe(429);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(14 * 60);
    const html = await response.text();
    expect(html).toContain(
      "Too many failed sign-ins. Try again in 15 minutes, sign in with a passkey, or reset your password.",
    );
    expect(html).toContain('data-webauthn="authenticate"');
  });

  it("sign-up: 5 accounts an hour per address, the 6th refused (429, Retry-After) and nothing made", async () => {
    const address = `signup-${crypto.randomUUID()}`;
    for (let i = 0; i < 5; i++) await signedUp(newEmail(), clientAt(address));
    const email = newEmail();
    const refused = await clientAt(address).submit("/console/sign-up", "/console/sign-up", {
      email,
      password: PASSWORD,
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(55 * 60);
    expect(await refused.text()).toContain("Too many sign-ups from your network. Try again in 60 minutes.");
    const made = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE email = ?")
      .bind(email.toLowerCase())
      .first<{ n: number }>();
    expect(made!.n).toBe(0);
    // Another address signs up; a refused form (weak password) is not counted.
    await signedUp(newEmail(), clientAt());
    const other = `signup-${crypto.randomUUID()}`;
    for (let i = 0; i < 6; i++) {
      const weak = await clientAt(other).submit("/console/sign-up", "/console/sign-up", {
        email: newEmail(),
        password: "password1234",
      });
      expect(weak.status).toBe(400);
    }
    await signedUp(newEmail(), clientAt(other));
  });

  it("sign-up: a burst of 8 at once from one address makes exactly 5 accounts", async () => {
    const address = `burst-${crypto.randomUUID()}`;
    const statuses = await Promise.all(
      Array.from({ length: 8 }, () =>
        clientAt(address).submit("/console/sign-up", "/console/sign-up", {
          email: newEmail(),
          password: PASSWORD,
        }),
      ),
    ).then((responses) => responses.map((r) => r.status).sort());
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    expect(statuses.filter((s) => s !== 429)).toHaveLength(5);
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
