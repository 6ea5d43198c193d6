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
  recordSignInFailure,
  SIGN_IN_CLIENT,
  SIGN_IN_EMAIL,
  SIGN_IN_PAIR,
  signInSubjects,
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

  /** A password sign-in through the domain call; `solved`: the page vouched for a challenge of this level. */
  const attempt = (email: string, password: string, client: string, now: number, solved = false) =>
    signIn(db(), env, { email, password, clientAddress: client, passes: async () => solved }, now);

  it("past 3 failures from one client for one email, the right password needs a solved challenge; never 429", async () => {
    const { email } = await signedUp();
    const t0 = Date.now();
    const client = `pair-${email}`;
    for (let i = 0; i < SIGN_IN_PAIR.challengeFrom; i++) {
      expect(await attempt(email, "wrong password number", client, t0 + i * 1000)).toEqual({
        ok: false,
        reason: "invalid",
        level: i + 1 < SIGN_IN_PAIR.challengeFrom ? 0 : 1,
      });
    }
    // Unsolved: nothing is checked or counted; solved: the right password signs in.
    expect(await attempt(email, PASSWORD, client, t0 + 5_000)).toEqual({
      ok: false,
      reason: "challenge",
      level: 1,
    });
    expect(await attempt(email, PASSWORD, client, t0 + 6_000, true)).toMatchObject({ ok: true });
    // The owner from another client is not asked for anything.
    expect(await attempt(email, PASSWORD, `${client}-home`, t0 + 7_000)).toMatchObject({ ok: true });
    // Once the failures leave the window, no challenge here either.
    expect(
      await attempt(email, PASSWORD, client, t0 + SIGN_IN_PAIR.windowSeconds * 1000 + 3_000),
    ).toMatchObject({ ok: true });
  });

  it("more failures, a harder challenge: the level doubles the work as the failures double", async () => {
    const { email } = await signedUp();
    const client = `harder-${email}`;
    const now = Date.now();
    const levels: number[] = [];
    for (let i = 0; i < 13; i++) {
      const result = await attempt(email, "still not it", client, now, true);
      levels.push(result.ok ? -1 : result.level);
    }
    // 3 failures: 1; 6: 2; 12: 3 (the pair's; the email's 10 give 1).
    expect(levels).toEqual([0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3]);
  });

  it("one user's failures behind a shared client trouble neither the others there nor the user elsewhere", async () => {
    const nat = `nat-${crypto.randomUUID()}`;
    const [alice, bob] = [await signedUp(), await signedUp()];
    const now = Date.now();
    for (let i = 0; i < 5; i++) await attempt(alice.email, "a wrong guess here", nat, now);
    expect(await attempt(alice.email, PASSWORD, nat, now + 1000)).toMatchObject({ reason: "challenge" });
    expect(await attempt(bob.email, PASSWORD, nat, now + 1000)).toMatchObject({ ok: true });
    expect(await attempt(alice.email, PASSWORD, `${nat}-phone`, now + 1000)).toMatchObject({ ok: true });
  });

  it("per email, from every client: 10 failures in an hour ask everyone for a challenge, never refuse", async () => {
    const { email } = await signedUp();
    const t0 = Date.now();
    for (let i = 0; i < SIGN_IN_EMAIL.challengeFrom; i++)
      await attempt(email, "distributed guess", `bot-${i}-${email}`, t0);
    const owner = `owner-${email}`;
    expect(await attempt(email, PASSWORD, owner, t0 + 1000)).toMatchObject({ reason: "challenge", level: 1 });
    expect(await attempt(email, PASSWORD, owner, t0 + 1000, true)).toMatchObject({ ok: true });
    expect(
      await attempt(email, PASSWORD, owner, t0 + SIGN_IN_EMAIL.windowSeconds * 1000 + 1000),
    ).toMatchObject({ ok: true });
  });

  it("per client across emails: 20 failures in 15 minutes (spraying) ask for a challenge, 19 do not", async () => {
    const client = `spray-${crypto.randomUUID()}`;
    const now = Date.now();
    const { email } = await signedUp();
    // 19 failures over 19 emails, recorded as signIn records them (a hash each is slow to repeat).
    for (let i = 0; i < SIGN_IN_CLIENT.challengeFrom - 1; i++)
      await recordSignInFailure(env, signInSubjects(newEmail().toLowerCase(), client), now);
    expect(await attempt(email, PASSWORD, client, now)).toMatchObject({ ok: true });
    await attempt(newEmail(), "whatever it is", client, now);
    expect(await attempt(email, PASSWORD, client, now)).toMatchObject({ reason: "challenge" });
    expect(await attempt(email, PASSWORD, client, now, true)).toMatchObject({ ok: true });
  });

  it("shows why and the challenge widget when one is due, with the passkey sign-in still on the page", async () => {
    const { email } = await signedUp();
    const client = clientAt();
    const now = Date.now();
    // The page counts a client by its throttle key (an IPv6 client by its /64).
    const key = clientKey(client.defaults["CF-Connecting-IP"]);
    for (let i = 0; i < SIGN_IN_PAIR.challengeFrom; i++)
      await attempt(email, "wrong password again", key, now);
    const response = await signInForm(client, email, PASSWORD);
    expect(response.status).toBe(403);
    expect(response.headers.get("retry-after")).toBeNull();
    const html = await response.text();
    expect(html).toContain("your browser first does a moment of work");
    expect(html).toMatch(/<altcha-widget[^>]* challenge="/);
    expect(html).toContain('data-webauthn="authenticate"');
    expect(response.headers.get("content-security-policy")).toMatch(/worker-src 'self'/);
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
