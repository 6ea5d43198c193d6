import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/context";
import { TUS_CHECKSUM_ALGORITHMS, TUS_EXTENSIONS, TUS_VERSION } from "../../uploads/tus";

/** The tus discovery headers (OPTIONS), documented once for both kinds of upload URL. */
export const DISCOVERY_HEADERS = {
  "Tus-Version": { schema: { type: "string" as const, example: TUS_VERSION } },
  "Tus-Extension": { schema: { type: "string" as const, example: TUS_EXTENSIONS.join(",") } },
  "Tus-Max-Size": { schema: { type: "string" as const, example: "5368709120" } },
  "Tus-Checksum-Algorithm": {
    schema: { type: "string" as const, example: TUS_CHECKSUM_ALGORITHMS.join(",") },
  },
};

const route = createRoute({
  method: "options",
  path: "/v1/uploads",
  operationId: "discoverUploads",
  tags: ["Uploads"],
  summary: "What the tus server supports",
  description: `tus discovery; no API key needed. Tus-Version, Tus-Extension, Tus-Max-Size (the largest Upload-Length) and Tus-Checksum-Algorithm (${TUS_CHECKSUM_ALGORITHMS.join(", ")}). No CORS headers: browsers upload through direct upload URLs (POST /v1/uploads/direct).`,
  security: [],
  responses: { 204: { description: "The server's tus capabilities.", headers: DISCOVERY_HEADERS } },
});

export function registerUploadOptions(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, (c) => {
    c.header("Tus-Version", TUS_VERSION);
    c.header("Tus-Extension", TUS_EXTENSIONS.join(","));
    c.header("Tus-Max-Size", String(c.get("config").uploadMaxBytes));
    c.header("Tus-Checksum-Algorithm", TUS_CHECKSUM_ALGORITHMS.join(","));
    return c.body(null, 204);
  });
}
