import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { hashSecret } from "../../src/auth/token";
import { listMailbox } from "../../src/mail/mailbox";
import { checkEmailToken, issueEmailToken, TOKEN_LIFETIME_MS } from "../../src/users/email-tokens";
import { findUserByEmail, signIn, signUp } from "../../src/users/service";
import { recordSignInFailure, SIGN_IN_EMAIL, signInSubjects } from "../../src/users/throttle";
import { verifyEmail } from "../../src/users/verification";
import { DashboardClient } from "../dashboard/client";
import { db } from "../helpers/api";
import { clientAt, newEmail, PASSWORD, signedUp, signInForm } from "./support";

const NEW_PASSWORD = "plum kettle orbit sandal";
const BAD_LINK = "This link does not work: it is mistyped, was used already, or expired.";

/** The mail to `email` (sent after the response, so it may take a moment), newest first. */
async function mailsTo(email: string, atLeast = 1) {
  const to = email.toLowerCase();
  for (let i = 0; i < 60; i++) {
    const mails = await listMailbox(env, { to });
    if (mails.length >= atLeast) return mails;
    await new Promise((r) => setTimeout(r, 50));
  }
  return listMailbox(env, { to });
}

/** The token of the newest mail to `email` whose subject matches, read from its link's fragment. */
async function tokenIn(email: string, subject: RegExp) {
  let mail: Awaited<ReturnType<typeof listMailbox>>[number] | undefined;
  for (let i = 0; i < 60 && !mail; i++) {
    mail = (await listMailbox(env, { to: email.toLowerCase() })).find((m) => subject.test(m.subject));
    if (!mail) await new Promise((r) => setTimeout(r, 50));
  }
  expect(mail, `a mail to ${email} matching ${subject}`).toBeDefined();
  const token = /#token=(\S+)/.exec(mail!.text)?.[1];
  expect(token).toBeDefined();
  return token!;
}

async function balanceOf(email: string) {
  const row = await env.DB.prepare(
    "SELECT a.credits AS credits, u.email_verified_at AS verified, u.pending_credits AS pending FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.email = ?",
  )
    .bind(email.toLowerCase())
    .first<{ credits: number; verified: number | null; pending: number }>();
  return row!;
}

const verifyForm = (client: DashboardClient, token: string) =>
  client.submit("/console/verify", "/console/verify", { token });

async function requestReset(client: DashboardClient, email: string) {
  return client.submit("/console/reset", "/console/reset", { email });
}

afterEach(() => vi.restoreAllMocks());

describe("email verification", () => {
  it("sign-up holds the credits; the mailed link verifies and grants them once", async () => {
    const { email, client } = await signedUp();
    expect(await balanceOf(email)).toMatchObject({ credits: 0, verified: null, pending: 100 });
    const overview = await (await client.get("/console")).text();
    expect(overview).toContain("Your 100 sign-up credits are added once it is verified.");

    const token = await tokenIn(email, /Verify your email/);
    const response = await verifyForm(clientAt(), token); // another browser, not signed in
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/console/verify?done=verified");
    expect(await balanceOf(email)).toMatchObject({ credits: 100, pending: 0 });
    expect((await balanceOf(email)).verified).toBeGreaterThan(0);
    const ledger = await env.DB.prepare(
      "SELECT amount, reason FROM credit_ledger l JOIN users u ON u.account_id = l.account_id WHERE u.email = ?",
    )
      .bind(email.toLowerCase())
      .all<{ amount: number; reason: string }>();
    expect(ledger.results).toEqual([{ amount: 100, reason: "sign-up credits (email verified)" }]);

    // Reused: refused with the one answer every bad link gets, nothing granted twice.
    const again = await verifyForm(clientAt(), token);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain(BAD_LINK);
    expect((await balanceOf(email)).credits).toBe(100);
    expect(await (await client.get("/console")).text()).not.toContain('id="verify-banner"');
  });

  it("opening the link (GET) spends nothing: only the form's POST does", async () => {
    const { email } = await signedUp();
    const token = await tokenIn(email, /Verify/);
    const page = await clientAt().get(`/console/verify`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('name="token"');
    expect((await balanceOf(email)).verified).toBeNull();
    expect((await verifyForm(clientAt(), token)).status).toBe(303);
  });

  it("refuses wrong, malformed, expired and superseded tokens with 400 and the same message", async () => {
    const { email } = await signedUp();
    const token = await tokenIn(email, /Verify/);
    const [id, secret] = token.split(".") as [string, string];
    const wrongSecret = `${id}.${secret.slice(0, -1)}${secret.endsWith("A") ? "B" : "A"}`;
    const unknownId = `01ARZ3NDEKTSV4RRFFQ69G5FAV.${secret}`;
    for (const bad of [wrongSecret, unknownId, "not-a-token", "", `${token}x`, `${id}.${"x".repeat(43)}`]) {
      const response = await verifyForm(clientAt(), bad);
      expect(response.status, bad).toBe(400);
      expect(await response.text()).toContain(BAD_LINK);
    }
    expect((await balanceOf(email)).verified).toBeNull();

    const user = (await findUserByEmail(db(), email))!;
    expect(await checkEmailToken(db(), wrongSecret, "verify", Date.now())).toEqual({
      ok: false,
      reason: "unknown",
    });
    expect(await checkEmailToken(db(), "nope", "verify", Date.now())).toEqual({
      ok: false,
      reason: "malformed",
    });
    // A reset token is not a verification token.
    const reset = await issueEmailToken(db(), user, "reset", Date.now());
    expect(await checkEmailToken(db(), reset.token, "verify", Date.now())).toEqual({
      ok: false,
      reason: "unknown",
    });

    // Expired: issued 24 h + 1 s ago.
    const old = await issueEmailToken(db(), user, "verify", Date.now() - TOKEN_LIFETIME_MS.verify - 1000);
    expect(await checkEmailToken(db(), old.token, "verify", Date.now())).toEqual({
      ok: false,
      reason: "expired",
    });
    expect((await verifyForm(clientAt(), old.token)).status).toBe(400);

    // A newer link supersedes the older ones: the mailed token was spent when `old` was issued.
    expect(await checkEmailToken(db(), token, "verify", Date.now())).toEqual({ ok: false, reason: "used" });
    const fresh = await issueEmailToken(db(), user, "verify", Date.now());
    expect(await checkEmailToken(db(), old.token, "verify", Date.now())).toMatchObject({ ok: false });
    expect((await verifyForm(clientAt(), fresh.token)).status).toBe(303);
  });

  it("two verifications racing with one token: one wins, credits granted once", async () => {
    const email = newEmail();
    const made = await signUp(db(), { email, password: PASSWORD, credits: 250 }, Date.now());
    if (!made.ok) throw new Error("sign-up failed");
    const { token } = await issueEmailToken(db(), made.user, "verify", Date.now());
    const results = await Promise.all(Array.from({ length: 5 }, () => verifyEmail(db(), token, Date.now())));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(await balanceOf(email)).toMatchObject({ credits: 250, pending: 0 });
  });

  it("stores only a hash of the secret, and logs no token", async () => {
    const logged: unknown[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logged.push(...args));
    }
    const { email } = await signedUp();
    const token = await tokenIn(email, /Verify/);
    const [id, secret] = token.split(".") as [string, string];
    const row = await env.DB.prepare("SELECT * FROM email_tokens WHERE id = ?")
      .bind(id)
      .first<Record<string, unknown>>();
    expect(row!.secret_hash).toBe(await hashSecret(secret));
    expect(JSON.stringify(row)).not.toContain(secret);
    await verifyForm(clientAt(), token);
    await verifyForm(clientAt(), token);
    expect(JSON.stringify(logged.map(String))).not.toContain(secret);
  });

  it("a new link: 3 an hour per user, then the overview says how long to wait", async () => {
    const { client, email } = await signedUp();
    for (let i = 0; i < 3; i++) {
      const response = await client.submit("/console", "/console/verify/resend");
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toBe("/console?mail=sent");
    }
    const refused = await client.submit("/console", "/console/verify/resend");
    expect(refused.headers.get("location")).toBe("/console?mail=wait-60");
    expect(await (await client.get("/console?mail=wait-60")).text()).toContain("Try again in 60 minutes.");
    expect(await mailsTo(email, 4)).toHaveLength(4); // the sign-up's and three more
  });
});

describe("password reset", () => {
  it("mails a single-use link; the new password works, the old one and every session end", async () => {
    const { email, client: oldSession } = await signedUp();
    const browser = clientAt();
    const asked = await requestReset(browser, email);
    expect(asked.status).toBe(303);
    expect(asked.headers.get("location")).toBe("/console/reset?sent=1");
    const token = await tokenIn(email, /Reset your/);

    // A weak password is refused and leaves the link working.
    const weak = await browser.submit("/console/reset/new", "/console/reset/new", {
      token,
      password: "password1234",
    });
    expect(weak.status).toBe(400);
    const done = await browser.submit("/console/reset/new", "/console/reset/new", {
      token,
      password: NEW_PASSWORD,
    });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe("/console/security?done=reset");
    expect(await (await browser.get("/console/security?done=reset")).text()).toContain("Password reset.");

    expect((await oldSession.get("/console")).status).toBe(303); // signed out
    expect((await signInForm(clientAt(), email, PASSWORD)).status).toBe(401);
    expect((await signInForm(clientAt(), email, NEW_PASSWORD)).status).toBe(303);
    // The link proved the address: verified, credits granted.
    expect(await balanceOf(email)).toMatchObject({ credits: 100, pending: 0 });

    const reused = await clientAt().submit("/console/reset/new", "/console/reset/new", {
      token,
      password: "another fine long passphrase",
    });
    expect(reused.status).toBe(400);
    expect(await reused.text()).toContain(BAD_LINK);
    expect((await signInForm(clientAt(), email, NEW_PASSWORD)).status).toBe(303);
  });

  it("answers an unknown email exactly as a known one, and mails nothing", async () => {
    const email = newEmail();
    const response = await requestReset(clientAt(), email);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/console/reset?sent=1");
    await new Promise((r) => setTimeout(r, 300));
    expect(await listMailbox(env, { to: email.toLowerCase() })).toHaveLength(0);
    const bad = await requestReset(clientAt(), "not an email");
    expect(bad.status).toBe(400);
  });

  it("refuses an expired (1 h) or wrong reset token with 400", async () => {
    const { email } = await signedUp();
    const user = (await findUserByEmail(db(), email))!;
    const old = await issueEmailToken(db(), user, "reset", Date.now() - TOKEN_LIFETIME_MS.reset - 1000);
    for (const token of [old.token, `${old.token.slice(0, -2)}zz`, "garbage"]) {
      const response = await clientAt().submit("/console/reset/new", "/console/reset/new", {
        token,
        password: NEW_PASSWORD,
      });
      expect(response.status).toBe(400);
      expect(await response.text()).toContain(BAD_LINK);
    }
    expect((await signInForm(clientAt(), email, PASSWORD)).status).toBe(303);
  });

  it("works for an owner challenged by the per-email sign-in throttle, and clears it", async () => {
    const { email } = await signedUp();
    const now = Date.now();
    for (let i = 0; i < SIGN_IN_EMAIL.challengeFrom; i++) {
      await recordSignInFailure(env, signInSubjects(email.toLowerCase(), `bot-${i % 3}-${email}`), now);
    }
    const owner = clientAt();
    const ownerAddress = owner.defaults["CF-Connecting-IP"]!;
    expect(
      await signIn(
        db(),
        env,
        { email, password: PASSWORD, clientAddress: ownerAddress, passes: async () => false },
        Date.now(),
      ),
    ).toMatchObject({ reason: "challenge" });
    expect((await signInForm(owner, email, PASSWORD)).status).toBe(403);

    expect((await requestReset(owner, email)).status).toBe(303);
    const token = await tokenIn(email, /Reset your/);
    const done = await owner.submit("/console/reset/new", "/console/reset/new", {
      token,
      password: NEW_PASSWORD,
    });
    expect(done.status).toBe(303);
    // The failures were guesses at the old password: forgotten, so the new one signs in from anywhere.
    expect((await signInForm(clientAt(), email, NEW_PASSWORD)).status).toBe(303);
  });

  it("3 reset links an hour per email (429, Retry-After), counted for unknown emails too", async () => {
    for (const email of [(await signedUp()).email, newEmail()]) {
      for (let i = 0; i < 3; i++) expect((await requestReset(clientAt(), email)).status).toBe(303);
      const refused = await requestReset(clientAt(), email);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(55 * 60);
      expect(await refused.text()).toContain("Too many reset links asked for. Try again in 60 minutes.");
    }
  });

  it("refuses the reset forms without their CSRF token", async () => {
    const client = clientAt();
    await client.get("/console/reset");
    expect((await client.post("/console/reset", { email: newEmail() })).status).toBe(403);
    expect((await client.post("/console/reset/new", { token: "x", password: NEW_PASSWORD })).status).toBe(
      403,
    );
    expect((await client.post("/console/verify", { token: "x" })).status).toBe(403);
  });
});

describe("the dev mailbox", () => {
  it("lists and shows mail on a loopback host, and is a 404 elsewhere", async () => {
    const { email } = await signedUp();
    await mailsTo(email);
    expect((await new DashboardClient().get("/dev/mailbox")).status).toBe(404);
    const local = new DashboardClient("http://127.0.0.1:8787");
    const list = await local.get(`/dev/mailbox?to=${encodeURIComponent(email)}`);
    expect(list.status).toBe(200);
    const html = await list.text();
    const href = /href="(\/dev\/mailbox\/[0-9A-Z]{26})"/.exec(html)?.[1];
    expect(href).toBeDefined();
    const mail = await (await local.get(href!)).text();
    expect(mail).toContain('href="http://api.test/console/verify#token=');
  });
});
