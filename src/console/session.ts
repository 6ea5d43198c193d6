import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { digestsEqual, hashSecret } from "../auth/token";
import { newSessionToken, openSession, SESSION_ABSOLUTE_MS } from "../sessions/store";
import { verifyFormWith } from "../ui/forms";
import type { ConsoleEnv } from "./context";
import { CONSOLE, consolePaths } from "./paths";

/** The signed-in session's random token (only its SHA-256 is stored). */
export const SESSION_COOKIE = "p6_console";
/** A random value that the sign-in and sign-up forms' CSRF token is bound to, before anyone is signed in. */
export const PRE_COOKIE = "p6_console_pre";
/** The challenge of a passkey ceremony in progress (random, single use, five minutes). */
export const CHALLENGE_COOKIE = "p6_console_challenge";
const PRE_TTL_S = 2 * 60 * 60;
const CHALLENGE_TTL_S = 5 * 60;

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

type Ctx = Context<ConsoleEnv>;

export function cookieOptions(c: Ctx, maxAge?: number) {
  return {
    path: CONSOLE,
    httpOnly: true,
    // A browser drops Secure cookies over plain-http local development; everywhere else they are Secure.
    secure: !LOCAL_HOSTS.has(new URL(c.req.url).hostname),
    sameSite: "Lax" as const,
    maxAge,
  };
}

export function setSessionCookie(c: Ctx, token: string) {
  setCookie(c, SESSION_COOKIE, token, cookieOptions(c, SESSION_ABSOLUTE_MS / 1000));
  deleteCookie(c, PRE_COOKIE, cookieOptions(c));
}

export function clearSessionCookie(c: Ctx) {
  deleteCookie(c, SESSION_COOKIE, cookieOptions(c));
}

export function setChallenge(c: Ctx, challenge: string) {
  setCookie(c, CHALLENGE_COOKIE, challenge, cookieOptions(c, CHALLENGE_TTL_S));
}

/** The challenge of the ceremony in progress, which can be answered once. */
export function takeChallenge(c: Ctx) {
  const challenge = getCookie(c, CHALLENGE_COOKIE);
  deleteCookie(c, CHALLENGE_COOKIE, cookieOptions(c));
  return challenge && /^[A-Za-z0-9_-]{16,128}$/.test(challenge) ? challenge : undefined;
}

/** A form's CSRF token: a digest of a secret only this browser holds (the session or pre-session cookie). */
const csrfFor = (purpose: string, secret: string) => hashSecret(`console-csrf.${purpose}.${secret}`);

/** The signed-in user and session, or null (no cookie, or a session that ended, expired or idled out). */
export async function currentSession(c: Ctx) {
  const found = await openSession(c.get("db"), getCookie(c, SESSION_COOKIE), Date.now());
  return found;
}

/**
 * Every page but sign-in and sign-up needs a live session. Without one the request goes to sign-in (a GET comes
 * back to its page afterwards) and nothing runs.
 */
export const requireUser = createMiddleware<ConsoleEnv>(async (c, next) => {
  const found = await currentSession(c);
  if (!found) {
    if (getCookie(c, SESSION_COOKIE) !== undefined) clearSessionCookie(c);
    const url = new URL(c.req.url);
    const back = c.req.method === "GET" && url.pathname !== CONSOLE ? `${url.pathname}${url.search}` : "";
    return c.redirect(`${consolePaths.signIn}${back ? `?next=${encodeURIComponent(back)}` : ""}`, 303);
  }
  c.set("user", found.user);
  c.set("sessionId", found.session.id);
  c.set("csrf", await csrfFor("session", getCookie(c, SESSION_COOKIE)!));
  await next();
});

/** A signed-in user's forms: the token bound to their session cookie. */
export const verifySessionForm = verifyFormWith<ConsoleEnv>(async (c, presented) => {
  const token = getCookie(c, SESSION_COOKIE);
  return token !== undefined && matches(presented, await csrfFor("session", token));
});

/** Sets the pre-session cookie when absent and the CSRF token of the sign-in and sign-up forms. */
export async function preparePreSession(c: Ctx) {
  let pre = getCookie(c, PRE_COOKIE);
  if (!pre || !/^[A-Za-z0-9_-]{43}$/.test(pre)) {
    pre = newSessionToken();
    setCookie(c, PRE_COOKIE, pre, cookieOptions(c, PRE_TTL_S));
  }
  c.set("csrf", await csrfFor("pre", pre));
}

/** The sign-in and sign-up forms: the token bound to the pre-session cookie (login CSRF). */
export const verifyPreSessionForm = verifyFormWith<ConsoleEnv>(async (c, presented) => {
  const pre = getCookie(c, PRE_COOKIE);
  return pre !== undefined && matches(presented, await csrfFor("pre", pre));
});

function matches(presented: unknown, expected: string) {
  return typeof presented === "string" && presented.length <= 128 && digestsEqual(presented, expected);
}
