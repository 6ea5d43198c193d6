import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors/api-error";
import { problemResponse } from "../errors/handler";
import type { AppEnv } from "../http/context";
import { verifyFormWith } from "../ui/forms";
import { query } from "../ui/query-string";
import type { DashboardEnv } from "./context";
import { BASE, paths } from "./paths";
import { csrfToken, csrfTokenMatches, findOperatorSession, openLoginSession, type Session } from "./session";

export const SESSION_COOKIE = "p6_dashboard";
export const LOGIN_COOKIE = "p6_dashboard_login";

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Secure everywhere except plain-http local development (a browser drops Secure cookies over http). */
function isLocal(c: Context) {
  return LOCAL_HOSTS.has(new URL(c.req.url).hostname);
}

export function adminToken(c: Context<DashboardEnv>) {
  // requireAdminToken ran first, so the token is set.
  return c.get("config").adminToken!;
}

export function setSessionCookie(c: Context<DashboardEnv>, name: string, value: string, session: Session) {
  setCookie(c, name, value, {
    path: name === LOGIN_COOKIE ? paths.login : BASE,
    httpOnly: true,
    secure: !isLocal(c),
    sameSite: "Strict",
    maxAge: Math.max(1, Math.floor((session.expiresAt - Date.now()) / 1000)),
  });
}

export function clearCookie(c: Context<DashboardEnv>, name: string) {
  deleteCookie(c, name, {
    path: name === LOGIN_COOKIE ? paths.login : BASE,
    httpOnly: true,
    secure: !isLocal(c),
    sameSite: "Strict",
  });
}

/** The sign-in form's pre-session, when its cookie is genuine and unexpired. */
export function readLoginSession(c: Context<DashboardEnv>) {
  return openLoginSession(adminToken(c), getCookie(c, LOGIN_COOKIE), Date.now());
}

/** The operator's session, when its cookie names a live row of the sessions table. */
export function readOperatorSession(c: Context<DashboardEnv>) {
  return findOperatorSession(c.get("db"), adminToken(c), getCookie(c, SESSION_COOKIE), Date.now());
}

/** Like the admin API: without ADMIN_TOKEN the dashboard does not exist (the same 404 as any unknown path). */
export const requireAdminToken = createMiddleware<DashboardEnv>(async (c, next) => {
  if (!c.get("config").adminToken) {
    // The same context; problemResponse reads only the app's own variables.
    return problemResponse(
      c as unknown as Context<AppEnv>,
      new ApiError("RESOURCE_NOT_FOUND", `No resource at ${new URL(c.req.url).pathname}.`),
    );
  }
  await next();
});

/**
 * Every page but sign-in needs a session. Without one (absent, unknown, signed out, expired, idle too long, or
 * started with a previous ADMIN_TOKEN) the request is sent to sign-in and nothing runs; a GET comes back to its
 * page afterwards.
 */
export const requireSession = createMiddleware<DashboardEnv>(async (c, next) => {
  const session = await readOperatorSession(c);
  if (!session) {
    if (getCookie(c, SESSION_COOKIE) !== undefined) clearCookie(c, SESSION_COOKIE);
    const url = new URL(c.req.url);
    const next = c.req.method === "GET" ? `${url.pathname}${url.search}` : undefined;
    return c.redirect(`${paths.login}${query({ next: next === paths.accounts ? undefined : next })}`, 303);
  }
  c.set("session", session);
  c.set("csrf", await csrfToken(adminToken(c), session));
  await next();
});

/**
 * The dashboard's forms carry the CSRF token of the session they are made with (`c.var.session`: the
 * signed-in session, or the sign-in form's own pre-session).
 */
export function verifyForm(session: (c: Context<DashboardEnv>) => Promise<Session | null>) {
  return verifyFormWith<DashboardEnv>(async (c, presented) => {
    const owner = await session(c);
    return owner !== null && (await csrfTokenMatches(adminToken(c), owner, presented));
  });
}
