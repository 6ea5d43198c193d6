import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { HttpUrl } from "@p6/contract/params";
import { ApiError } from "../../errors/api-error";
import { errorResponses, headers } from "../../errors/openapi";
import { checkTargets } from "../../fetch/targets";
import type { AppEnv } from "../../http/context";
import { parseCorsOrigin } from "../../uploads/direct";
import { grantDirectUpload } from "../../uploads/service";

const DirectUploadBody = z
  .strictObject({
    cors_origin: z.string().min(1).max(512).openapi({
      description:
        "The origin of the page that will upload (scheme, host and port, as the browser sends Origin): https, or http on a loopback host where the deployment allows private sources. Only this origin gets CORS answers from the URL.",
      example: "https://app.example",
    }),
    max_size: z.number().int().min(1).optional().openapi({
      description:
        "The largest Upload-Length the URL accepts (413 beyond), at most the deployment's maximum upload size (its default).",
      example: 104857600,
    }),
    webhook: HttpUrl.optional().openapi({
      description:
        "URL sent a signed upload.completed delivery (Standard Webhooks, like task events) when the upload is complete. Checked by the webhook address rules now and before every attempt.",
      example: "https://example.com/hooks/p6",
    }),
  })
  .openapi("CreateDirectUpload");

export const DirectUploadSchema = z
  .object({
    id: z.string().openapi({
      description:
        "The id the upload has (pending until the browser creates it): GET /v1/uploads/{id} follows it, and once complete it is a `source_upload_id`.",
      example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB",
    }),
    url: z.string().openapi({
      description:
        "A tus endpoint for one upload, with no API key: the browser POSTs the creation there (tus-js-client / Uppy `endpoint`), then PATCHes and HEADs the Location it gets. Its secret is in the URL: hand it to that browser only.",
      example:
        "https://api.example.com/v1/direct-uploads/01JD5Z8X4QK3M7R2T9V6W1Y0AB.Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmE",
    }),
    expires_at: z.string().openapi({
      format: "date-time",
      description:
        "Until when the URL can create its upload (1 h by default); the upload then has the usual 24 h to complete.",
    }),
  })
  .openapi("DirectUpload");

const route = createRoute({
  method: "post",
  path: "/v1/uploads/direct",
  operationId: "createDirectUpload",
  tags: ["Uploads"],
  summary: "Create a direct upload URL",
  description:
    "A one-time tus endpoint a browser on `cors_origin` uploads to without an API key (the key stays on your server): good for exactly one upload (a second creation through it → 409), bounded by `max_size` (413), expiring after 1 h (410). Preflights and answers of the URL carry CORS headers for `cors_origin` only; the URL grants nothing but that upload's creation, PATCH and HEAD (no read, no download, no other upload). Counts toward the account's incomplete uploads from now on (403 UPLOAD_QUOTA_EXCEEDED beyond). The flow: your server calls this with its key and hands `url` to the page; the page uploads the file with any tus client, `url` as its endpoint (tus-js-client, Uppy's @uppy/tus, the TypeScript client's `uploadDirect(url, file)`); your server names `id` as `source_upload_id` once GET /v1/uploads/{id} says complete or the `upload.completed` webhook arrives. Needs the write scope.",
  request: {
    body: { required: true, content: { "application/json": { schema: DirectUploadBody } } },
  },
  responses: {
    201: {
      description:
        "The URL, and the id its upload will have. Location is the upload's (GET /v1/uploads/{id}).",
      headers: headers("Location"),
      content: { "application/json": { schema: DirectUploadSchema } },
    },
    ...errorResponses(400, 401, 403, 405, 413, 415, 429, 500),
  },
});

export function registerDirectUpload(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const config = c.get("config");
    const origin = parseCorsOrigin(body.cors_origin, config.allowPrivateSources);
    if (!origin.ok) throw ApiError.invalid("cors_origin", `cors_origin ${origin.reason}.`);
    if (body.max_size !== undefined && body.max_size > config.uploadMaxBytes)
      throw ApiError.invalid(
        "max_size",
        `max_size ${body.max_size} exceeds the maximum upload size of ${config.uploadMaxBytes} bytes.`,
      );
    if (body.webhook)
      await checkTargets({ engine: null, dohUrl: config.dohUrl }, config.allowPrivateSources, {
        webhookUrl: body.webhook,
      });
    const apiOrigin = new URL(c.req.url).origin;
    const granted = await grantDirectUpload(
      { env: c.env, config },
      {
        accountId: c.get("principal").accountId,
        corsOrigin: origin.origin,
        maxSize: body.max_size ?? null,
        webhook: body.webhook ?? null,
      },
      apiOrigin,
      Date.now(),
    );
    c.header("Location", `${apiOrigin}/v1/uploads/${granted.id}`);
    c.header("Cache-Control", "no-store");
    return c.json(granted, 201);
  });
}
