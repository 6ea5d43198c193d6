import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { activeSecrets, rotateWebhookSecret } from "../../webhooks/secrets";
import { requireAccount } from "./accounts";
import { AccountIdParam, WebhookSecretsSchema } from "./schema";

const tags = ["Admin"];
const security = [{ AdminToken: [] }];

const show = createRoute({
  method: "get",
  path: "/admin/v1/accounts/{account_id}/webhook-secret",
  operationId: "getWebhookSecret",
  tags,
  security,
  summary: "The active webhook signing secrets (the current one first)",
  request: { params: AccountIdParam },
  responses: {
    200: {
      description: "Active secrets.",
      content: { "application/json": { schema: WebhookSecretsSchema } },
    },
    ...errorResponses(401, 404, 405, 429, 500),
  },
});

const rotate = createRoute({
  method: "post",
  path: "/admin/v1/accounts/{account_id}/webhook-secret/rotate",
  operationId: "rotateWebhookSecret",
  tags,
  security,
  summary: "Rotate the webhook secret; the previous one keeps signing for 24 h",
  request: { params: AccountIdParam },
  responses: {
    200: {
      description: "The new secret.",
      content: {
        "application/json": {
          schema: z.object({
            secret: z.string(),
            previous_active_until: z.string().openapi({ format: "date-time" }),
          }),
        },
      },
    },
    ...errorResponses(400, 401, 404, 405, 413, 415, 429, 500),
  },
});

export function registerAdminWebhookSecret(app: OpenAPIHono<AppEnv>) {
  app.openapi(show, async (c) => {
    const { account_id } = c.req.valid("param");
    await requireAccount(c, account_id);
    const secrets = await activeSecrets(c.get("db"), account_id, Date.now());
    return c.json(
      {
        secrets: secrets.map((s) => ({
          secret: s.secret,
          active_until: s.activeUntil === null ? null : new Date(s.activeUntil).toISOString(),
        })),
      },
      200,
    );
  });

  app.openapi(rotate, async (c) => {
    const { account_id } = c.req.valid("param");
    await requireAccount(c, account_id);
    const { secret, previousActiveUntil } = await rotateWebhookSecret(c.get("db"), account_id, Date.now());
    return c.json({ secret, previous_active_until: new Date(previousActiveUntil).toISOString() }, 200);
  });
}
