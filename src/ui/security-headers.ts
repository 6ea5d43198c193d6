import { createMiddleware } from "hono/factory";
import { bytesToBase64 } from "../util/encoding";

/**
 * Security headers of every server-rendered page (the dashboard's, the console's, the dev mailbox's): nothing
 * cached, nothing framed, and a Content-Security-Policy that allows only this response's own inline style and
 * script (by nonce) — no other origin, no plugins. A page that needs more adds it (src/console/csp.ts).
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
