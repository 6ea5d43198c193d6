import type { OpenAPIHono } from "@hono/zod-openapi";
import { html, raw } from "hono/html";
import { adminAuth } from "../../auth/admin";
import type { AppEnv } from "../../http/context";
import { openApiDocument } from "./openapi";

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!,
  );

/**
 * Public documentation: GET /v1/openapi.json and an HTML reference at /docs. The page lists every operation
 * server-side (readable without JavaScript or network) and upgrades to the interactive Scalar viewer when
 * its script can be loaded.
 */
export function registerDocs(app: OpenAPIHono<AppEnv>) {
  app.get("/v1/openapi.json", (c) => c.json(openApiDocument(app, "public", new URL(c.req.url).origin)));
  app.get("/admin/v1/openapi.json", adminAuth, (c) =>
    c.json(openApiDocument(app, "admin", new URL(c.req.url).origin)),
  );
  app.get("/docs", (c) => {
    const doc = openApiDocument(app, "public", new URL(c.req.url).origin);
    const rows = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item ?? {})
        .filter(([method]) => ["get", "post", "put", "delete", "head"].includes(method))
        .map(([method, op]) => {
          const summary = (op as { summary?: string }).summary ?? "";
          return `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(summary)}</td></tr>`;
        }),
    );
    return c.html(html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${doc.info.title} — API reference</title>
    <style>
      body { font: 15px/1.5 system-ui, sans-serif; max-width: 960px; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
      table { border-collapse: collapse; width: 100%; } td { border-top: 1px solid #ddd; padding: .4rem .6rem; vertical-align: top; }
      code { font: 13px ui-monospace, monospace; }
    </style>
  </head>
  <body>
    <div id="summary">
      <h1>${doc.info.title}</h1>
      <p>The machine-readable document: <a href="/v1/openapi.json">/v1/openapi.json</a> (OpenAPI 3.1).</p>
      <table>${raw(rows.join(""))}</table>
    </div>
    <script id="api-reference" data-url="/v1/openapi.json"></script>
    <script>
      document.getElementById("api-reference").addEventListener?.("load", () => {});
    </script>
    <script src="https://cdn.jsdelivr.net/npm/@scalar/api-reference@1" onload="document.getElementById('summary').remove()"></script>
  </body>
</html>`);
  });
}
