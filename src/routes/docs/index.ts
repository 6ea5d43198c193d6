import type { OpenAPIHono } from "@hono/zod-openapi";
import { adminAuth } from "../../auth/admin";
import { addCodeSamples } from "../../docs/code-samples";
import { guidesMarkdown } from "../../docs/guides";
import type { Document } from "../../docs/openapi";
import { isRendererFile } from "../../docs/renderer-files";
import { ApiError } from "../../errors/api-error";
import type { AppEnv } from "../../http/context";
import { openApiDocument } from "./openapi";
import { referencePage } from "./reference-page";
import { registerSamples } from "./samples";

/**
 * Public documentation: GET /v1/openapi.json (the contract, for clients and generators) and the API
 * reference at /docs: Scalar's renderer (wrangler.toml [assets], served under /docs/assets/ by this Worker)
 * over /docs/openapi.json, which is the same document plus the guides and the code samples.
 */
export function registerDocs(app: OpenAPIHono<AppEnv>) {
  app.get("/v1/openapi.json", (c) => c.json(openApiDocument(app, "public", new URL(c.req.url).origin)));
  app.get("/admin/v1/openapi.json", adminAuth, (c) =>
    c.json(openApiDocument(app, "admin", new URL(c.req.url).origin)),
  );

  app.get("/docs/openapi.json", (c) => {
    const origin = new URL(c.req.url).origin;
    const doc = structuredClone(openApiDocument(app, "public", origin)) as unknown as Document;
    const rateLimit = c.get("config").defaultRateLimitPerMinute;
    doc.info.description = `${doc.info.description ?? ""}\n\nThe OpenAPI 3.1 document: [/v1/openapi.json](/v1/openapi.json).\n\n${guidesMarkdown(rateLimit, origin)}`;
    return c.json(addCodeSamples(doc, origin));
  });

  app.get("/docs", (c) => referencePage(c, openApiDocument(app, "public", "").info.title));

  // The renderer's files (its entry module and the chunks it imports on demand), from the static assets.
  app.get("/docs/assets/*", async (c) => {
    const name = c.req.path.slice("/docs/assets/".length);
    const missing = new ApiError("RESOURCE_NOT_FOUND", `No renderer file ${name}.`);
    if (!isRendererFile(name)) throw missing;
    const asset = await c.env.ASSETS.fetch(new URL(`/${name}`, c.req.url));
    if (!asset.ok) {
      await asset.body?.cancel();
      throw missing;
    }
    const response = new Response(asset.body, asset);
    response.headers.set("Content-Type", "text/javascript; charset=utf-8");
    // Chunk names carry a content hash; the entry module changes with the package version.
    response.headers.set(
      "Cache-Control",
      name.startsWith("chunks/") ? "public, max-age=31536000, immutable" : "public, max-age=3600",
    );
    return response;
  });

  registerSamples(app);
}
