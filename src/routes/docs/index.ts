import type { OpenAPIHono } from "@hono/zod-openapi";
import { createElement } from "hono/jsx";
import { adminAuth } from "../../auth/admin";
import type { Document } from "../../docs/openapi";
import { referenceModel } from "../../docs/reference";
import type { AppEnv } from "../../http/context";
import { renderPage } from "./layout";
import { openApiDocument } from "./openapi";
import { ReferencePage } from "./page";

/**
 * Public documentation: GET /v1/openapi.json and the reference at /docs, rendered here from that document
 * (no script, no request to any other origin; see layout.tsx for its Content-Security-Policy).
 */
export function registerDocs(app: OpenAPIHono<AppEnv>) {
  app.get("/v1/openapi.json", (c) => c.json(openApiDocument(app, "public", new URL(c.req.url).origin)));
  app.get("/admin/v1/openapi.json", adminAuth, (c) =>
    c.json(openApiDocument(app, "admin", new URL(c.req.url).origin)),
  );
  app.get("/docs", (c) => {
    const doc = openApiDocument(app, "public", new URL(c.req.url).origin) as unknown as Document;
    const reference = referenceModel(doc);
    const rateLimit = c.get("config").defaultRateLimitPerMinute;
    return renderPage(
      c,
      `${reference.title} — API reference`,
      createElement(ReferencePage, { reference, rateLimit }),
    );
  });
}
