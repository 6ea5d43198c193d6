import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { ApiError } from "../../errors/api-error";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { createKey, keyView, listKeys, MAX_ACTIVE_KEYS, revokeKey } from "../../keys/service";
import { requireAccount } from "./accounts";
import { AccountIdParam, CreatedKeySchema, CreateKeyBody, KeyIdParam, KeySchema } from "./schema";

const tags = ["Admin"];
const security = [{ AdminToken: [] }];

const create = createRoute({
  method: "post",
  path: "/admin/v1/accounts/{account_id}/keys",
  operationId: "createKey",
  tags,
  security,
  summary: "Create an API key (the full key is in this response only)",
  description: `An account holds at most ${MAX_ACTIVE_KEYS} active keys (neither revoked nor expired), its default key included: past that, 409 \`RESOURCE_CONFLICT\` and no key is made. Revoke one to make room.`,
  request: {
    params: AccountIdParam,
    body: { required: false, content: { "application/json": { schema: CreateKeyBody } } },
  },
  responses: {
    201: { description: "Created.", content: { "application/json": { schema: CreatedKeySchema } } },
    ...errorResponses(400, 401, 404, 405, 409, 413, 415, 429, 500),
  },
});

const list = createRoute({
  method: "get",
  path: "/admin/v1/accounts/{account_id}/keys",
  operationId: "listKeys",
  tags,
  security,
  summary: "List an account's keys (masked; never the secret)",
  request: { params: AccountIdParam },
  responses: {
    200: {
      description: "The keys, newest first.",
      content: { "application/json": { schema: z.object({ results: z.array(KeySchema) }) } },
    },
    ...errorResponses(401, 404, 405, 429, 500),
  },
});

const revoke = createRoute({
  method: "post",
  path: "/admin/v1/keys/{key_id}/revoke",
  operationId: "revokeKey",
  tags,
  security,
  summary: "Revoke a key, effective on the very next request",
  request: { params: KeyIdParam },
  responses: {
    200: {
      description: "Revoked (idempotent: a revoked key keeps its first revocation time).",
      content: { "application/json": { schema: z.object({ id: z.string(), revoked_at: z.string() }) } },
    },
    ...errorResponses(400, 401, 404, 405, 413, 415, 429, 500),
  },
});

export function registerAdminKeys(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const { account_id } = c.req.valid("param");
    const body = c.req.valid("json") ?? {};
    await requireAccount(c, account_id);
    const { row, key } = await createKey(
      c.get("db"),
      account_id,
      {
        name: body.name,
        scopes: body.scopes,
        expiresInDays: body.expires_in_days,
        rateLimitPerMinute: body.rate_limit_per_minute,
      },
      Date.now(),
    );
    return c.json({ ...keyView(row), key }, 201);
  });

  app.openapi(list, async (c) => {
    const { account_id } = c.req.valid("param");
    await requireAccount(c, account_id);
    const rows = await listKeys(c.get("db"), account_id);
    return c.json({ results: rows.map(keyView) }, 200);
  });

  app.openapi(revoke, async (c) => {
    const { key_id } = c.req.valid("param");
    const revokedAt = await revokeKey(c.get("db"), c.env, key_id, Date.now());
    if (revokedAt === null) throw new ApiError("RESOURCE_NOT_FOUND", `Key ${key_id} does not exist.`);
    return c.json({ id: key_id, revoked_at: new Date(revokedAt).toISOString() }, 200);
  });
}
