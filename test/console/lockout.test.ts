import { solveChallenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/web/pbkdf2";
import { describe, expect, it } from "vitest";
import { csrfOf, type DashboardClient } from "../dashboard/client";
import { clientAt, newEmail, PASSWORD, signedUp } from "./support";

/**
 * Issue 40, deliberate lockouts: failed sign-ins aimed at other people (a burst of unknown emails from a shared
 * address, or guesses at one owner's email from many places) must never keep the right password out. Past a
 * few failures the sign-in asks for a proof of work (ALTCHA) instead of refusing: the test solves it with
 * altcha-lib's own solver, as the widget does in a browser.
 */

let prefixes = 0;
const newPrefix = () =>
  `2001:db8:${(0xb000 + ++prefixes).toString(16)}:${(Date.now() % 0xffff).toString(16)}`;

const htmlDecode = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

/** The ALTCHA challenge a sign-in page carries, or undefined when it asks for none. */
function challengeOf(html: string) {
  const attribute = /<altcha-widget[^>]*\schallenge="([^"]*)"/.exec(html)?.[1];
  return attribute === undefined ? undefined : JSON.parse(htmlDecode(attribute));
}

/** The widget's form value: base64 of {challenge, solution}, solved here as a browser would. */
async function solve(challenge: Parameters<typeof solveChallenge>[0]["challenge"]) {
  const solution = await solveChallenge({ challenge, deriveKey, timeout: 60_000 });
  expect(solution).not.toBeNull();
  return btoa(JSON.stringify({ challenge, solution }));
}

async function signIn(client: DashboardClient, email: string, password: string, extra = {}) {
  const page = await client.get("/console/sign-in");
  const html = await page.text();
  const response = await client.post("/console/sign-in", { _csrf: csrfOf(html), email, password, ...extra });
  return { page: html, response };
}

describe("no lockout an attacker can aim at someone else", () => {
  it("100 failures for unknown emails from one address, then the known user's right password signs in", async () => {
    const address = `${newPrefix()}::5`;
    const { email } = await signedUp(newEmail(), clientAt(`${newPrefix()}::1`));
    const attacker = clientAt(address);
    // As a script would: one page for its form token, then 100 posts with it.
    const csrf = csrfOf(await (await attacker.get("/console/sign-in")).text());
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      const response = await attacker.post("/console/sign-in", {
        _csrf: csrf,
        email: newEmail(),
        password: "a wrong password here",
      });
      statuses.push(response.status);
      await response.body?.cancel();
    }
    // Refused for the wrong password at first, then asked for a proof of work: never 429.
    expect(statuses).not.toContain(429);
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThan(0);
    expect(statuses.at(-1)).toBe(403);

    // The user behind the same address: the page already asks for the work; solved, the password counts.
    const user = clientAt(address);
    const page = await (await user.get("/console/sign-in")).text();
    const challenge = challengeOf(page);
    expect(challenge).toBeDefined();
    expect(page).toContain('data-webauthn="authenticate"'); // passkey sign-in stays open
    const unsolved = await user.post("/console/sign-in", { _csrf: csrfOf(page), email, password: PASSWORD });
    expect(unsolved.status).toBe(403);
    const html = await unsolved.text();
    const fresh = challengeOf(html);
    const payload = await solve(fresh);
    const signedIn = await user.post("/console/sign-in", {
      _csrf: csrfOf(html),
      email,
      password: PASSWORD,
      altcha: payload,
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toBe("/console");

    // A solution is good once: replayed, it is refused and a new challenge is asked for.
    const replay = clientAt(address);
    const replayPage = await (await replay.get("/console/sign-in")).text();
    const replayed = await replay.post("/console/sign-in", {
      _csrf: csrfOf(replayPage),
      email,
      password: PASSWORD,
      altcha: payload,
    });
    expect(replayed.status).toBe(403);
  }, 120_000); // 101 sign-in posts, 20 of them hashing a password (scrypt): more than one operation's 30 s.

  it("30 failures on an owner's email from 30 places do not lock the owner out for an hour", async () => {
    const owner = clientAt(`${newPrefix()}::1`);
    const { email } = await signedUp(newEmail(), owner);
    for (let i = 0; i < 30; i++) {
      const { response } = await signIn(clientAt(`${newPrefix()}::9`), email, "a distributed guess");
      expect(response.status).not.toBe(429);
    }
    const home = clientAt(`${newPrefix()}::2`);
    const first = await signIn(home, email, PASSWORD);
    expect(first.response.status).toBe(403);
    const html = await first.response.text();
    expect(html).toContain("sign in with a passkey");
    const solved = await home.post("/console/sign-in", {
      _csrf: csrfOf(html),
      email,
      password: PASSWORD,
      altcha: await solve(challengeOf(html)),
    });
    expect(solved.status).toBe(303);
  });

  it("a tampered challenge (easier than the one issued) is refused", async () => {
    const address = `${newPrefix()}::7`;
    const { email } = await signedUp(newEmail(), clientAt(`${newPrefix()}::1`));
    const attacker = clientAt(address);
    for (let i = 0; i < 25; i++) await signIn(attacker, newEmail(), "a wrong password here");
    const { response } = await signIn(attacker, email, PASSWORD);
    const html = await response.text();
    const challenge = challengeOf(html);
    const tampered = { ...challenge, parameters: { ...challenge.parameters, keyPrefix: "0" } };
    const forged = await attacker.post("/console/sign-in", {
      _csrf: csrfOf(html),
      email,
      password: PASSWORD,
      altcha: btoa(JSON.stringify({ challenge: tampered, solution: { counter: 0, derivedKey: "00" } })),
    });
    expect(forged.status).toBe(403);
  });
});
