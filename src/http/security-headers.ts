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

export const securityHeaders = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  try {
    applySecurityHeaders(c.res.headers);
  } catch {
    // Headers of a response passed through from elsewhere are immutable: copy it first.
    c.res = new Response(c.res.body, c.res);
    applySecurityHeaders(c.res.headers);
  }
});
