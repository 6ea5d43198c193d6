import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./context";

/**
 * Headers every response carries, whatever produced it (JSON, problem+json, stored files, HTML pages):
 * - `X-Content-Type-Options: nosniff`: a stored file or a JSON body is never reinterpreted as HTML/script;
 * - `Referrer-Policy: no-referrer`: signed file URLs and task ids never leak to third parties through a
 *   Referer. A page that needs more (the dashboard's same-origin) sets its own.
 * HTML pages also get a strict Content-Security-Policy when they set none (nothing but same-origin images
 * and styles, same-origin forms, no scripts), and `frame-ancestors 'none'` + `X-Frame-Options: DENY` always:
 * a page with its own policy (the dashboard's nonces, /docs' viewer) keeps it, with `frame-ancestors 'none'`
 * added when the policy leaves it out, so no page of this origin can be framed.
 */
const DEFAULT_HTML_CSP = [
  "default-src 'none'",
  "img-src 'self' data:",
  "style-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

export function applySecurityHeaders(headers: Headers): void {
  headers.set("X-Content-Type-Options", "nosniff");
  if (!headers.has("Referrer-Policy")) headers.set("Referrer-Policy", "no-referrer");
  if (!/^text\/html\b/i.test(headers.get("Content-Type") ?? "")) return;
  const csp = headers.get("Content-Security-Policy");
  if (csp === null) headers.set("Content-Security-Policy", DEFAULT_HTML_CSP);
  else if (!/(^|;)\s*frame-ancestors\b/i.test(csp))
    headers.set("Content-Security-Policy", `${csp}; frame-ancestors 'none'`);
  headers.set("X-Frame-Options", "DENY");
}

/**
 * One year. No `includeSubDomains` and no `preload`: the API's hostname may share its parent domain with sites
 * this Worker knows nothing about, which the header would then force onto HTTPS too (docs/decisions.md).
 */
export const HSTS = "max-age=31536000";

/** The only answer under /v1 or /admin/v1 that needs no credentials and may be cached: the public document. */
const PUBLIC_DOCUMENT = "/v1/openapi.json";

/**
 * Headers that depend on the request:
 * - `Strict-Transport-Security` on every answer to an HTTPS request (a browser ignores it over plain HTTP,
 *   and local development is plain HTTP);
 * - `Cache-Control: no-store` on every answer of the key-authenticated API and the admin API, errors included,
 *   whatever the route set: a shared cache must never keep a customer's account, tasks, usage or keys, nor
 *   tell one client what another was refused. Signed /files URLs, the docs and the pages keep their own.
 */
export function applyRequestHeaders(request: Request, headers: Headers): void {
  const url = new URL(request.url);
  if (url.protocol === "https:") headers.set("Strict-Transport-Security", HSTS);
  const api = url.pathname.startsWith("/v1/") || url.pathname.startsWith("/admin/v1/");
  if (api && url.pathname !== PUBLIC_DOCUMENT) headers.set("Cache-Control", "no-store");
}

export const securityHeaders = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const apply = () => {
    applySecurityHeaders(c.res.headers);
    applyRequestHeaders(c.req.raw, c.res.headers);
  };
  try {
    apply();
  } catch {
    // Headers of a response passed through from elsewhere are immutable: copy it first.
    c.res = new Response(c.res.body, c.res);
    apply();
  }
});
