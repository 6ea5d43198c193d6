import type { OpenAPIHono } from "@hono/zod-openapi";
import { RESPONSE_HEADERS } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import {
  canonicalHeaderParameters,
  declareCommonHeaders,
  describeRequestDefaults,
  pruneComponents,
} from "./document";
import { registerWebhooks } from "./webhooks";

const DESCRIPTION = `Media processing: watermark, trim, probe and extract from images, video and audio given by a public URL —
synchronously or as asynchronous tasks with signed webhooks.

Authenticate with \`Authorization: Bearer p6_<key_id>:<secret>\`. Errors are RFC 9457 problem+json. Every response
carries \`X-Request-Id\`; every response to a recognised API key carries the IETF \`RateLimit-Policy\` and
\`RateLimit\` fields (60 requests per minute per key unless the operator set another limit). API answers are
never cached (\`Cache-Control: no-store\`); answers over HTTPS carry \`Strict-Transport-Security: max-age=31536000\`.`;

type Document = ReturnType<OpenAPIHono<AppEnv>["getOpenAPI31Document"]>;

let cached: { public: Document; admin: Document } | undefined;

function build(app: OpenAPIHono<AppEnv>) {
  const registry = app.openAPIRegistry;
  registry.registerComponent("securitySchemes", "ApiKey", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "p6_<key_id>:<secret>",
    description: "An API key: p6_ followed by a 26-character ULID key_id, a colon and 64 hex characters.",
  });
  registry.registerComponent("securitySchemes", "AdminToken", {
    type: "http",
    scheme: "bearer",
    description: "The operator's ADMIN_TOKEN.",
  });
  for (const [name, header] of Object.entries(RESPONSE_HEADERS)) {
    registry.registerComponent("headers", name, header);
  }
  registerWebhooks(registry);
  const full = structuredClone(
    app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: { title: "p6 media API", version: "1.0.0", description: DESCRIPTION },
      security: [{ ApiKey: [] }],
      tags: [
        { name: "Tasks", description: "Asynchronous tasks." },
        { name: "Operations", description: "Synchronous media operations." },
        { name: "Files", description: "Signed, expiring output files." },
        {
          name: "Uploads",
          description:
            "Resumable uploads (tus 1.0.0: creation, creation-with-upload, expiration, termination, checksum sha1 and sha256), usable as sources; direct upload URLs for browsers, which need no key.",
        },
        { name: "Account", description: "The account's balance, the calling key, and usage." },
        {
          name: "Webhooks",
          description:
            "Signed deliveries to the task's webhook URL when it ends (or starts, when asked), and to a direct upload's when it completes.",
        },
        { name: "Admin", description: "The operator API (ADMIN_TOKEN)." },
      ],
    }),
  );
  declareCommonHeaders(full);
  canonicalHeaderParameters(full);
  describeRequestDefaults(full);
  const pick = (admin: boolean) =>
    pruneComponents({
      ...full,
      info: admin ? { ...full.info, title: "p6 media API — operator API" } : full.info,
      security: admin ? [{ AdminToken: [] }] : full.security,
      paths: Object.fromEntries(
        Object.entries(full.paths ?? {}).filter(([path]) => path.startsWith("/admin/") === admin),
      ),
      // Webhooks are deliveries to integrators: part of the public contract only.
      webhooks: admin ? undefined : full.webhooks,
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
