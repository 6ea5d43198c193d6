import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/context";

const DESCRIPTION = `Media processing: watermark, trim, probe and extract from images, video and audio given by a public URL —
synchronously or as asynchronous tasks with signed webhooks.

Authenticate with \`Authorization: Bearer p6_<key_id>:<secret>\`. Errors are RFC 9457 problem+json. Every response
carries \`X-Request-Id\`; every authenticated response carries the IETF \`RateLimit-Policy\` and \`RateLimit\` fields.
Project decisions that the interface leaves open are written in docs/decisions.md of the repository.`;

type Document = ReturnType<OpenAPIHono<AppEnv>["getOpenAPI31Document"]>;

let cached: { public: Document; admin: Document } | undefined;

function build(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "p6_<key_id>:<secret>",
    description: "An API key: p6_ followed by a 26-character ULID key_id, a colon and 64 hex characters.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "AdminToken", {
    type: "http",
    scheme: "bearer",
    description: "The operator's ADMIN_TOKEN.",
  });
  const full = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: "p6 media API", version: "1.0.0", description: DESCRIPTION },
    security: [{ ApiKey: [] }],
    tags: [
      { name: "Tasks", description: "Asynchronous tasks." },
      { name: "Operations", description: "Synchronous media operations." },
      { name: "Files", description: "Signed, expiring output files." },
      { name: "Admin", description: "The operator API (ADMIN_TOKEN)." },
    ],
  });
  const pick = (admin: boolean): Document => ({
    ...full,
    info: admin ? { ...full.info, title: "p6 media API — operator API" } : full.info,
    security: admin ? [{ AdminToken: [] }] : full.security,
    paths: Object.fromEntries(
      Object.entries(full.paths ?? {}).filter(([path]) => path.startsWith("/admin/") === admin),
    ),
    tags: full.tags?.filter((tag) => (tag.name === "Admin") === admin),
  });
  return { public: pick(false), admin: pick(true) };
}

/** The OpenAPI 3.1 documents, generated once per isolate from the zod route definitions. */
export function openApiDocument(
  app: OpenAPIHono<AppEnv>,
  which: "public" | "admin",
  origin: string,
): Document {
  cached ??= build(app);
  return { ...cached[which], servers: [{ url: origin }] };
}
