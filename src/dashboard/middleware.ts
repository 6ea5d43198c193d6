import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors/api-error";
import { problemResponse } from "../errors/handler";
import type { AppEnv } from "../http/context";
import { bytesToBase64 } from "../util/encoding";
import type { DashboardEnv } from "./context";
import { BASE, paths, query } from "./paths";
import { csrfToken, csrfTokenMatches, findOperatorSession, openLoginSession, type Session } from "./session";

export const SESSION_COOKIE = "p6_dashboard";
export const LOGIN_COOKIE = "p6_dashboard_login";
export const CSRF_FIELD = "_csrf";
const MAX_FORM_BYTES = 64 * 1024;

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

/**
 * Security headers of every dashboard response: nothing cached, nothing framed, and a Content-Security-Policy
 * that allows only this response's own inline style and script (by nonce) — no other origin, no plugins.
 */
export const securityHeaders = createMiddleware<{ Variables: { nonce: string } }>(async (c, next) => {
  const nonce = bytesToBase64(crypto.getRandomValues(new Uint8Array(16)));
  c.set("nonce", nonce);
  await next();
  const headers = c.res.headers;
  headers.set("Cache-Control", "no-store");
  headers.set(
    "Content-Security-Policy",
    [
      "default-src 'none'",
      `style-src 'nonce-${nonce}'`,
      `script-src 'nonce-${nonce}'`,
      "img-src 'self' data:",
      "form-action 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join("; "),
  );
  headers.set("X-Frame-Options", "DENY");
  headers.set("X-Content-Type-Options", "nosniff");
  headers.set("Referrer-Policy", "same-origin");
  headers.set("Cross-Origin-Opener-Policy", "same-origin");
});

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

/** A browser says where a POST comes from; one from another origin is refused whatever it carries. */
function fromThisOrigin(c: Context) {
  const origin = c.req.header("origin");
  if (origin !== undefined) return origin === new URL(c.req.url).origin;
  const site = c.req.header("sec-fetch-site");
  return site === undefined || site === "same-origin" || site === "none";
}

function formError(message: string) {
  return new ApiError("PERMISSION_FORBIDDEN", message);
}

const limitBody = bodyLimit({
  maxSize: MAX_FORM_BYTES,
  onError: () => {
    throw new ApiError("REQUEST_BODY_TOO_LARGE", "The form is larger than 64 KiB.");
  },
});

/** The context of any pages whose forms `verifyFormWith` checks (the dashboard's, the console's). */
export type FormEnv = {
  Bindings: Env;
  Variables: AppEnv["Variables"] & { form: Record<string, string | string[]> };
};

/**
 * Every POST is a form post from this origin whose CSRF token `tokenMatches` accepts. Checked before any work;
 * the parsed form is then `c.var.form`.
 */
export function verifyFormWith<E extends FormEnv>(
  tokenMatches: (c: Context<E>, presented: unknown) => Promise<boolean>,
) {
  return createMiddleware<E>(async (c, outerNext) =>
    limitBody(c, async () => {
      if (!fromThisOrigin(c)) throw formError("The form was sent from another site; it was refused.");
      const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
      if (type !== "application/x-www-form-urlencoded" && type !== "multipart/form-data") {
        throw new ApiError("CONTENT_TYPE_UNSUPPORTED", "Only HTML form posts are accepted here.");
      }
      const body = await c.req.parseBody({ all: true });
      const form: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(body)) {
        const values = (Array.isArray(value) ? value : [value]).filter((v) => typeof v === "string");
        form[name] = values.length === 1 ? values[0]! : values;
      }
      if (!(await tokenMatches(c, form[CSRF_FIELD]))) {
        throw formError(
          "The form's security token is missing or out of date. Reload the page and try again.",
        );
      }
      (c as unknown as Context<FormEnv>).set("form", form);
      await outerNext();
    }),
  );
}

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
