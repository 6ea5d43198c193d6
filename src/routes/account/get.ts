import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { accountOverview } from "../../accounts/overview";
import { ApiError } from "../../errors/api-error";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";

export const AccountSchema = z
  .object({
    id: z.string().openapi({ example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB" }),
    name: z.string().openapi({ example: "Acme" }),
    balance: z.number().int().openapi({
      description: "Spendable credits now (the credits of unfinished tasks are already taken out).",
      example: 120,
    }),
    reserved_credits: z.number().int().openapi({
      description:
        "Credits reserved by the account's queued and processing tasks: kept when a task succeeds, refunded when it fails or is canceled.",
      example: 4,
    }),
    tasks_in_progress: z.number().int().openapi({ description: "Queued and processing tasks.", example: 2 }),
    key: z
      .object({
        id: z
          .string()
          .openapi({ description: "The calling key's key_id.", example: "01JD5Z8X4QK3M7R2T9V6W1Y0AC" }),
        name: z.string().openapi({ example: "ci" }),
        scopes: z.array(z.enum(["read", "write"])).openapi({ example: ["read", "write"] }),
        rate_limit_per_minute: z.number().int().openapi({
          description: "Requests per minute this key may make (its own limit, or the deployment's default).",
          example: 60,
        }),
        expires_at: z.string().nullable().openapi({ example: null }),
      })
      .openapi({ description: "The API key this request was made with." }),
    uploads: z
      .object({
        incomplete: z.number().int().openapi({
          description: "Incomplete uploads now, pending direct upload URLs included.",
          example: 2,
        }),
        max_incomplete: z.number().int().openapi({
          description: "How many the account may have at once (UPLOAD_QUOTA_INCOMPLETE).",
          example: 20,
        }),
        stored_bytes: z.number().int().openapi({
          description:
            "Bytes of uploads held: complete ones, plus the declared Upload-Length of incomplete ones.",
          example: 314572800,
        }),
        max_stored_bytes: z.number().int().openapi({
          description: "How many the account may hold (UPLOAD_QUOTA_BYTES).",
          example: 53687091200,
        }),
      })
      .openapi({
        description:
          "The account's upload quotas: a creation past either limit is refused 403 UPLOAD_QUOTA_EXCEEDED. Expired and deleted uploads do not count.",
      }),
  })
  .openapi("Account");

const route = createRoute({
  method: "get",
  path: "/v1/account",
  operationId: "getAccount",
  tags: ["Account"],
  summary: "The account and the calling key",
  description:
    "Balance, reserved credits, the calling key's scopes and rate limit, and the upload quotas (usage and limits). Needs the read scope.",
  responses: {
    200: { description: "The account.", content: { "application/json": { schema: AccountSchema } } },
    ...errorResponses(401, 403, 405, 429, 500),
  },
});

export function registerGetAccount(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { accountId, keyId } = c.get("principal");
    const config = c.get("config");
    const view = await accountOverview(c.get("db"), accountId, keyId, {
      defaultRateLimit: config.defaultRateLimitPerMinute,
      uploadLimits: config.uploadQuota,
      now: Date.now(),
    });
    // The key was authenticated a moment ago: only a deletion in between leaves nothing to show.
    if (!view) throw new ApiError("RESOURCE_NOT_FOUND", "The account no longer exists.");
    return c.json(view, 200);
  });
}
