import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { errorResponses, headers as responseHeaders, withHeaders } from "../../errors/openapi";
import { errorTypeBase } from "../../errors/problem";
import { checkLiteralTargets } from "../../fetch/targets";
import type { AppEnv } from "../../http/context";
import { reportPhases } from "../../http/timing";
import { requestFingerprint } from "../../idempotency/fingerprint";
import { OPERATIONS, schemaNameOf } from "../../operations";
import { executeSync } from "../../operations/sync";
import { checkTextMark } from "../../operations/text-mark";
import type { Operation } from "../../operations/types";
import { materializeSources, UPLOAD_SOURCE_PREFIX } from "../../uploads/source";
import { oneSource, sourceShape, sourceVariants } from "../sources";

const headers = z.object({
  "idempotency-key": z
    .string()
    .regex(/^[\x20-\x7E]{1,255}$/, "Must be 1 to 255 printable ASCII characters.")
    .openapi({
      description:
        "Required. The same key with the same body replays the original result without charging again.",
      example: "order-1234-cover",
    }),
  "x-debug-timing": z.string().optional().openapi({
    description: "Any non-empty value adds Server-Timing (auth, engine, fetch, process, store, total).",
  }),
});

function routeFor(operation: Operation) {
  const [domain, name] = operation.type.split(".");
  const body = z
    .strictObject({
      ...sourceShape,
      // Absent params are validated as {} (a preprocess, so the document shows the params component itself).
      params: z.preprocess((value) => (value === undefined ? {} : value), operation.params),
    })
    .superRefine(oneSource)
    .openapi(`${schemaNameOf(operation.type)}Request`, {
      ...sourceVariants,
      example: { source_url: "https://example.com/input", params: operation.example.params },
    });
  const errors = errorResponses(
    400,
    401,
    402,
    403,
    404,
    405,
    409,
    410,
    413,
    415,
    422,
    429,
    500,
    502,
    503,
    504,
  );
  return createRoute({
    method: "post",
    path: `/v1/${domain}/${name}`,
    operationId: operation.operationId,
    tags: ["Operations"],
    summary: operation.summary,
    description: `${operation.description}\n\nCosts ${operation.cost} credit${operation.cost === 1 ? "" : "s"}, charged once on success. Asynchronous equivalent: POST /v1/tasks with type \`${operation.type}\`.`,
    request: { headers, body: { required: true, content: { "application/json": { schema: body } } } },
    responses: {
      200: {
        description: "The result.",
        headers: responseHeaders("Idempotent-Replayed", "Server-Timing"),
        content: { "application/json": { schema: operation.result } },
      },
      ...errors,
      // Failures that ran and would fail the same way again are stored and replayed like a success.
      413: withHeaders(errors[413], "Idempotent-Replayed"),
      415: withHeaders(errors[415], "Idempotent-Replayed"),
    },
  });
}

/** Paths of the synchronous routes (app.ts puts hono/timing's Server-Timing middleware on them). */
export const OPERATION_PATHS: ReadonlySet<string> = new Set(
  OPERATIONS.map((operation) => `/v1/${operation.type.replace(".", "/")}`),
);

/** The synchronous routes, one per operation of the registry: POST /v1/<domain>/<operation>. */
export function registerOperationRoutes(app: OpenAPIHono<AppEnv>) {
  for (const operation of OPERATIONS) {
    app.openapi(routeFor(operation), async (c) => {
      const { source_url, source_upload_id, params: given } = c.req.valid("json");
      // A text mark no font can draw is refused before the key is claimed or the source fetched.
      await checkTextMark(c.env, given);
      // URLs refused by their literal form (private, loopback, metadata in any spelling) are validation: the
      // 400 naming the field comes before credits and before the account's share of the engine.
      checkLiteralTargets(c.get("config").allowPrivateSources, {
        sourceUrl: source_url,
        watermarkUrl: (given as { watermark_url?: string }).watermark_url,
      });
      const url = new URL(c.req.url);
      // Uploads named as sources: the account's and complete (404 / 410 / 409 naming the field), then handed
      // to the engine as short-lived signed URLs (src/uploads/source.ts).
      const { sourceUrl, params } = await materializeSources(c.env, c.get("config"), {
        accountId: c.get("principal").accountId,
        origin: url.origin,
        sourceUrl: source_url ?? `${UPLOAD_SOURCE_PREFIX}${source_upload_id}`,
        params: given,
        jobMs: c.get("config").syncTimeoutMs,
        now: Date.now(),
      });
      const { response, replayed } = await executeSync(
        {
          operation,
          sourceUrl,
          params,
          accountId: c.get("principal").accountId,
          requestId: c.get("requestId"),
          idempotencyKey: c.req.valid("header")["idempotency-key"],
          fingerprint: await requestFingerprint("POST", url.pathname, await c.req.json()),
          origin: url.origin,
          problem: {
            typeBase: errorTypeBase(c.get("config").errorTypeBase, c.req.url),
            instance: url.pathname,
          },
        },
        {
          env: c.env,
          config: c.get("config"),
          db: c.get("db"),
          timing: c.get("timing"),
          waitUntil: (p) => c.executionCtx.waitUntil(p),
        },
      );
      const out = new Headers(response.headers);
      if (replayed) out.set("Idempotent-Replayed", "true");
      if (c.req.header("x-debug-timing")) reportPhases(c, c.get("timing"));
      for (const [name, value] of out) c.header(name, value);
      return c.body(response.body, response.status as 200) as never;
    });
  }
}
