/**
 * CORS of the direct upload URLs, the only cross-origin surface of the API (docs/decisions.md "Direct
 * uploads"): answered for the URL's own `cors_origin` only, on its preflights and on every answer to it,
 * errors included, so the browser can read them. Every other route sends no CORS header at all.
 */

/** The tus request headers a browser's tus client sends (tus-js-client, Uppy). */
export const CORS_ALLOW_HEADERS = [
  "Tus-Resumable",
  "Upload-Length",
  "Upload-Offset",
  "Upload-Metadata",
  "Upload-Checksum",
  "Content-Type",
  "X-HTTP-Method-Override",
];

/** What the browser's script may read of an answer: the tus response headers. */
export const CORS_EXPOSE_HEADERS = [
  "Location",
  "Upload-Offset",
  "Upload-Length",
  "Upload-Expires",
  "Upload-Metadata",
  "Tus-Resumable",
  "Tus-Version",
  "Tus-Extension",
  "Tus-Max-Size",
  "Tus-Checksum-Algorithm",
  "X-Request-Id",
];

/** How long a browser may keep a preflight's answer: an upload URL's whole life is shorter than this. */
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

/** The headers of an answer to a request from `origin`, the URL's own. */
export function corsHeaders(origin: string): Record<string, string> {
  return {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Expose-Headers": CORS_EXPOSE_HEADERS.join(", "),
    Vary: "Origin",
  };
}

/** A preflight's headers: the methods of the URL (`methods`), the tus request headers. */
export function preflightHeaders(origin: string, methods: string[]): Record<string, string> {
  return {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Allow-Methods": methods.join(", "),
    "Access-Control-Allow-Headers": CORS_ALLOW_HEADERS.join(", "),
    "Access-Control-Max-Age": String(PREFLIGHT_MAX_AGE_SECONDS),
    Vary: "Origin",
  };
}
