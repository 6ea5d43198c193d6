import { z } from "@hono/zod-openapi";

const Timestamp = z.string().openapi({ format: "date-time" });
const Ulid = z.string().openapi({ example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB" });

export const AccountSchema = z
  .object({ id: Ulid, name: z.string(), credits: z.number().int(), created_at: Timestamp })
  .openapi("AdminAccount");

export const AccountIdParam = z.object({
  account_id: Ulid.openapi({ param: { name: "account_id", in: "path" } }),
});
export const KeyIdParam = z.object({ key_id: Ulid.openapi({ param: { name: "key_id", in: "path" } }) });

export const CreateAccountBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200).openapi({ example: "Acme Inc." }),
    credits: z.number().int().min(0).max(1_000_000_000).optional().openapi({ example: 1000 }),
  })
  .openapi("AdminCreateAccount");

export const KeySchema = z
  .object({
    id: Ulid,
    prefix: z.string().openapi({ example: "p6_01JD5Z8X..." }),
    name: z.string(),
    scopes: z.array(z.enum(["read", "write"])),
    expires_at: Timestamp.nullable(),
    revoked_at: Timestamp.nullable(),
    last_used_at: Timestamp.nullable(),
    rate_limit_per_minute: z.number().int().nullable(),
    created_at: Timestamp,
  })
  .openapi("AdminKey");

export const CreatedKeySchema = KeySchema.extend({
  key: z
    .string()
    .openapi({ description: "The full key, shown this once.", example: "p6_01JD5Z8X4QK3M7R2T9V6W1Y0AB:3f…" }),
}).openapi("AdminCreatedKey");

export const CreateKeyBody = z
  .strictObject({
    name: z.string().trim().max(100).optional(),
    scopes: z
      .array(z.enum(["read", "write"]))
      .min(1)
      .optional(),
    expires_in_days: z.number().int().min(1).max(365).optional(),
    rate_limit_per_minute: z.number().int().min(1).max(100_000).optional(),
  })
  .openapi("AdminCreateKey");

export const CreatedAccountSchema = AccountSchema.omit({ created_at: true })
  .extend({
    webhook_secret: z.string().openapi({ example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }),
    api_key: CreatedKeySchema.openapi({
      description: "The default key created with the account (shown once).",
    }),
    created_at: Timestamp,
  })
  .openapi("AdminCreatedAccount");

export const GrantBody = z
  .strictObject({
    amount: z.number().int().min(1).max(1_000_000_000).openapi({ example: 500 }),
    reason: z.string().trim().min(1).max(500).openapi({ example: "Top-up, invoice 2026-118" }),
  })
  .openapi("AdminGrant");

export const LedgerEntrySchema = z
  .object({
    id: Ulid,
    kind: z.enum(["grant", "charge", "reserve", "refund"]),
    amount: z.number().int(),
    balance_after: z.number().int(),
    task_id: z.string().nullable(),
    request_id: z.string().nullable(),
    reason: z.string().nullable(),
    created_at: Timestamp,
  })
  .openapi("AdminLedgerEntry");

export const WebhookSecretsSchema = z
  .object({
    secrets: z.array(
      z.object({
        secret: z.string(),
        active_until: Timestamp.nullable().openapi({ description: "null for the current secret." }),
      }),
    ),
  })
  .openapi("AdminWebhookSecrets");

export const PageFields = { has_next: z.boolean(), next_cursor: z.string() };
