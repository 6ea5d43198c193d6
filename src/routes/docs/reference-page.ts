import type { Context } from "hono";
import { html, raw } from "hono/html";
import { bytesToBase64 } from "../../util/encoding";

/**
 * Scalar's configuration: the document with the guides and code samples, only the samples the document
 * carries (`x-codeSamples`: curl and the TypeScript client; `hiddenClients` drops the generated ones), and
 * everything that would reach another origin or a hosted service off: Scalar's fonts, telemetry, its
 * agent and MCP features, the developer toolbar, and the in-page API client with its "Test Request" button
 * (its proxy and OAuth helpers live on scalar.com).
 */
export const SCALAR_CONFIGURATION = {
  url: "/docs/openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
  hideClientButton: true,
  hideTestRequestButton: true,
  hiddenClients: true,
  documentDownloadType: "none",
  hideModels: false,
  defaultOpenAllTags: false,
  operationTitleSource: "summary",
  showOperationId: true,
  layout: "modern",
  theme: "default",
} as const;

/**
 * The two stylesheets the renderer (@scalar/api-reference 1.76.0, pinned) injects without the nonce: the
 * toasts' (vue-sonner) and the default theme's. Static text, so allowed by hash; a new version of the
 * renderer may change them, and then test/browser/docs.test.ts fails with the hash Chromium wants.
 */
const STYLE_ELEMENT_HASHES = [
  "'sha256-l/2OpPg0d+2VLTLgwjf5mQo2CYwHDEqdj5TjbfEyVJI='",
  "'sha256-T13Uev3xCax2N28XaoAE8DOzQZKvPp7ZQVAi1iRREjo='",
];

/**
 * The page's policy, per response: scripts only by this response's nonce (the renderer's entry module,
 * whose imports inherit it, and the call that starts it), styles only by the same nonce (the renderer puts
 * it on the stylesheets it injects, read from the csp-nonce meta element), data only from this origin.
 */
export function referencePolicy(nonce: string) {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}' 'report-sample'`,
    `style-src 'nonce-${nonce}' 'report-sample' ${STYLE_ELEMENT_HASHES.join(" ")}`,
    // Style attributes: the renderer writes some as HTML (code blocks' `--line-count: N` for every N, a
    // scrollbar probe), which no nonce can cover and no fixed hash list can enumerate. Attributes only: a
    // <style> element still needs the nonce or one of the hashes above, and scripts the nonce.
    "style-src-attr 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * Overrides of Scalar's default theme for WCAG AA contrast (4.5:1 for its small text; axe-core checks it in
 * test/browser/docs.test.ts): darker secondary text and method/syntax colours in light mode, lighter in
 * dark mode; unlayered, so they win over the theme's `@layer`. Code blocks in the guides wrap instead of
 * scrolling (a scrolling region must be reachable by keyboard, and Scalar's are not focusable).
 */
export const REFERENCE_CSS = `
.light-mode {
  --scalar-color-2: #555;
  --scalar-color-3: #616161;
  --scalar-color-accent: #0060a0;
  --scalar-color-green: #00663f;
  --scalar-color-red: #b80005;
  --scalar-color-yellow: #6e5200;
  --scalar-color-blue: #00558f;
  --scalar-color-orange: #a83800;
  --scalar-color-purple: #5203d1;
  --scalar-color-query: #005a5e;
}
.dark-mode {
  --scalar-color-2: #c4c4c4;
  --scalar-color-3: #adadad;
}
.markdown pre > code.custom-scroll { white-space: pre-wrap !important; overflow-wrap: anywhere; overflow: visible !important; }
.markdown pre > code.custom-scroll * { white-space: inherit !important; }
`;

/** JSON safe inside a <script> element. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");

/** GET /docs: the renderer's mount point and its start, under a per-response nonce. */
export function referencePage(c: Context, title: string) {
  const nonce = bytesToBase64(crypto.getRandomValues(new Uint8Array(16)));
  c.header("Content-Security-Policy", referencePolicy(nonce));
  c.header("Cache-Control", "no-store");
  // Zod (inside the renderer) probes for eval with Function("") unless told it runs without: jitless, its
  // documented setting for pages whose CSP forbids eval. Set before the renderer's modules run.
  const start = `globalThis.__zod_globalConfig = { ...globalThis.__zod_globalConfig, jitless: true };
const { createApiReference } = await import("/docs/assets/standalone.esm.js");
createApiReference("#reference", ${scriptJson(SCALAR_CONFIGURATION)});`;
  return c.html(html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta property="csp-nonce" content="${nonce}" />
    <link rel="icon" href="data:," />
    <title>${title} — API reference</title>
    <style nonce="${nonce}">${raw(REFERENCE_CSS)}</style>
  </head>
  <body>
    <noscript>
      <h1>${title} — API reference</h1>
      <p>The reference needs JavaScript. The OpenAPI 3.1 document: <a href="/v1/openapi.json">/v1/openapi.json</a>.</p>
    </noscript>
    <div id="reference"></div>
    <script type="module" nonce="${nonce}">${raw(start)}</script>
  </body>
</html>`);
}
