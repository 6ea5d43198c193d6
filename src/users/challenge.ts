import { type Challenge, createChallenge, randomInt, verifySolution } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/web/pbkdf2";
import { MAX_LEVEL, takeSlot } from "./throttle";

/**
 * The challenge a password sign-in must pass once failures pile up (docs/console.md "Throttles"), instead of a
 * refusal an attacker could aim at someone else. By default a proof of work, ALTCHA (altcha-lib on the server,
 * the `altcha` widget in the browser, both served by this Worker: it works offline and under `npm run dev`);
 * Cloudflare Turnstile instead where the operator sets TURNSTILE_SITE_KEY and TURNSTILE_SECRET_KEY.
 *
 * The work: PBKDF2-SHA-256 of COST iterations per try, in ALTCHA's deterministic mode (the server picks the
 * answer's counter, so the work is exact and verifying it is one HMAC). The level, from the failures counted
 * (throttle.ts), doubles the counter each step: level 1 takes a browser about half a second, level 6 (MAX_LEVEL)
 * some 16 seconds on one core (the widget uses several).
 */

export const ALGORITHM = "PBKDF2/SHA-256";
/** PBKDF2 iterations per try: about 1 ms of a browser's (or a server's) native PBKDF2. */
const COST = 1_000;
/** A challenge is good for this long, and once (its nonce is spent when a sign-in uses it). */
export const CHALLENGE_SECONDS = 10 * 60;

/** The counter's range at `level`: [max/2, max], max = 500 × 2^(level-1). */
export function counterRange(level: number): [number, number] {
  const max = 500 * 2 ** (Math.min(Math.max(level, 1), MAX_LEVEL) - 1);
  return [max / 2, max];
}

/** The HMAC keys challenges are signed with, derived from the Worker's FILE_SIGNING_SECRET (one per purpose). */
async function keys(secret: string) {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const derive = async (label: string) =>
    [...new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(label)))]
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("");
  return {
    hmacSignatureSecret: await derive("p6 sign-in challenge: signature"),
    hmacKeySignatureSecret: await derive("p6 sign-in challenge: key signature"),
  };
}

/** A fresh proof-of-work challenge at `level`, signed, expiring in CHALLENGE_SECONDS. */
export async function issueChallenge(secret: string, level: number, now: number): Promise<Challenge> {
  const [min, max] = counterRange(level);
  const counter = randomInt(max, min);
  return createChallenge({
    algorithm: ALGORITHM,
    cost: COST,
    counter,
    deriveKey,
    expiresAt: Math.floor(now / 1000) + CHALLENGE_SECONDS,
    data: { level, purpose: "sign-in" },
    ...(await keys(secret)),
  });
}

type Throttles = Pick<Env, "THROTTLE">;

/**
 * Whether `payload` (the widget's form value: base64 of `{challenge, solution}`) solves a challenge this Worker
 * issued for sign-in, unexpired, at `level` or above, and unused: its nonce is then spent (the throttle's object
 * of that nonce, one event per CHALLENGE_SECONDS), so a solution signs in once.
 */
export async function checkSolution(
  env: Throttles,
  secret: string,
  payload: string,
  level: number,
  now: number,
): Promise<boolean> {
  let parsed: { challenge?: Challenge; solution?: { counter: number; derivedKey: string } };
  try {
    parsed = JSON.parse(atob(payload.slice(0, 8192)));
  } catch {
    return false;
  }
  const { challenge, solution } = parsed;
  if (!challenge?.parameters || !solution) return false;
  const data = challenge.parameters.data;
  if (data?.purpose !== "sign-in" || typeof data.level !== "number" || data.level < level) return false;
  if (challenge.parameters.algorithm !== ALGORITHM) return false;
  const result = await verifySolution({ challenge, solution, deriveKey, ...(await keys(secret)) }).catch(
    () => null,
  );
  if (!result?.verified) return false;
  const spent = await takeSlot(
    env,
    {
      subject: `challenge:${challenge.parameters.nonce}`,
      rule: { limit: 1, windowSeconds: CHALLENGE_SECONDS },
    },
    now,
  );
  return !spent.blocked;
}

/** Cloudflare Turnstile's verification endpoint. */
export const TURNSTILE_VERIFY_URL = "https://challenges.cloudflare.com/turnstile/v0/siteverify";

/**
 * Whether Turnstile vouches for `token` (its widget's `cf-turnstile-response` field): siteverify with the
 * secret key and the client's address. Turnstile tokens are single-use and expire after 300 s on Cloudflare's
 * side. A verifier that cannot be reached or answers nonsense counts as not vouched.
 */
export async function checkTurnstile(secretKey: string, token: string, remoteIp: string | undefined) {
  if (token === "" || token.length > 2048) return false;
  const body = new FormData();
  body.set("secret", secretKey);
  body.set("response", token);
  if (remoteIp) body.set("remoteip", remoteIp);
  try {
    const response = await fetch(TURNSTILE_VERIFY_URL, {
      method: "POST",
      body,
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return false;
    }
    const answer = (await response.json()) as { success?: unknown };
    return answer.success === true;
  } catch {
    return false;
  }
}
