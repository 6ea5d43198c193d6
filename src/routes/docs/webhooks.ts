import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/context";
import { WEBHOOK_EVENTS, type WebhookEvent } from "../../webhooks/events";
import type { UploadWebhookEvent } from "../../webhooks/upload-events";
import { TaskSchema } from "../tasks/schema";
import { UploadSchema } from "../uploads/schema";

/** One `v1,<base64 HMAC-SHA256>` token per active secret, space-separated (two during a rotation). */
export const SIGNATURE_PATTERN = "^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*$";

const SIGNING = `Every delivery is signed following Standard Webhooks (https://www.standardwebhooks.com):

1. The account's signing secret has the form \`whsec_<base64 of 32 random bytes>\` (the operator hands it out and
   rotates it). Remove the \`whsec_\` prefix and base64-decode the rest: that is the HMAC key.
2. The signed content is \`\${webhook-id}.\${webhook-timestamp}.\${body}\`: the two header values and the raw
   request body bytes exactly as received, before any JSON parsing or re-serialisation.
3. The expected signature is \`v1,\` followed by base64(HMAC-SHA256(key, signed content)).
4. \`webhook-signature\` holds one or more space-separated tokens, one per active secret: during a rotation the
   old and the new secret both sign. Accept the delivery when any token equals the expected one, compared in
   constant time.
5. Reject a delivery whose \`webhook-timestamp\` is more than 5 minutes away from your clock (replay
   protection).

Worked example: secret \`whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\`, webhook-id \`msg_01JD5Z8X4QK3M7R2T9V6W1Y0AB\`,
webhook-timestamp \`1795400000\` and body \`{"id":"01JD5Z8X4QK3M7R2T9V6W1Y0AB","status":"succeeded"}\` give
\`v1,JWdH+U0d7OW9tFBlR5YtEcbX4lkiA0O3A9ZSlLJPlGs=\`.

Verifying in TypeScript with the \`standardwebhooks\` package (it does steps 1–5):

\`\`\`ts
import { Webhook } from "standardwebhooks";

const wh = new Webhook(process.env.P6_WEBHOOK_SECRET!); // "whsec_…"
// rawBody: the request body as a string, unparsed; throws when the signature or the timestamp is wrong.
const task = wh.verify(rawBody, {
  "webhook-id": req.headers["webhook-id"],
  "webhook-timestamp": req.headers["webhook-timestamp"],
  "webhook-signature": req.headers["webhook-signature"],
});
const event = req.headers["x-webhook-event"]; // started | completed | failed | canceled | upload.completed
\`\`\`

Delivery is at least once: the same \`webhook-id\` on every attempt (deduplicate on it), a fresh timestamp and
signature per attempt. Any 2xx acknowledges; anything else, a redirect (never followed) or no answer within
15 seconds is a failure, retried after 10 s, 1 min, 10 min and 1 h: at most 5 attempts.`;

const EVENTS: Record<WebhookEvent, { name: string; status: string; when: string }> = {
  started: {
    name: "taskStarted",
    status: "processing",
    when: "A task started processing (its first queued → processing): `status` is `processing`, `started_at` is set. Sent only when the task's webhook_events_filter names `started`.",
  },
  completed: {
    name: "taskCompleted",
    status: "succeeded",
    when: "A task succeeded: `status` is `succeeded` and `outputs` lists the signed URLs of its files. Sent unless the task's webhook_events_filter leaves `completed` out.",
  },
  failed: {
    name: "taskFailed",
    status: "failed",
    when: "A task failed: `status` is `failed`, `error` holds code, message and request_id, `outputs` is empty. Sent unless the task's webhook_events_filter leaves `failed` out.",
  },
  canceled: {
    name: "taskCanceled",
    status: "canceled",
    when: "A task was canceled (POST /v1/tasks/{id}/cancel): `status` is `canceled`. Sent only when the task's webhook_events_filter names `canceled`.",
  },
};

function deliveryHeaders(event: WebhookEvent | UploadWebhookEvent) {
  return z.object({
    "webhook-id": z
      .string()
      .regex(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/)
      .openapi({
        description: "The delivery's id, msg_<ULID>: the same on every attempt; part of the signed content.",
        example: "msg_01JD5Z8X4QK3M7R2T9V6W1Y0AB",
      }),
    "webhook-timestamp": z.string().regex(/^\d+$/).openapi({
      description: "Unix time in seconds when this attempt was signed; part of the signed content.",
      example: "1795400000",
    }),
    "webhook-signature": z.string().regex(new RegExp(SIGNATURE_PATTERN)).openapi({
      description: "Space-separated `v1,<base64 signature>` tokens, one per active secret.",
      example: "v1,JWdH+U0d7OW9tFBlR5YtEcbX4lkiA0O3A9ZSlLJPlGs=",
    }),
    "X-Webhook-Event": z.literal(event).openapi({ description: "The event; it is not in the body." }),
  });
}

/** The deliveries as OpenAPI 3.1 webhooks: what an integrator's endpoint receives and must answer. */
export function registerWebhooks(registry: OpenAPIHono<AppEnv>["openAPIRegistry"]) {
  for (const event of WEBHOOK_EVENTS) {
    const { name, status, when } = EVENTS[event];
    registry.registerWebhook({
      method: "post",
      path: name,
      operationId: name,
      tags: ["Webhooks"],
      summary: `Task ${event} (X-Webhook-Event: ${event})`,
      description: `${when}\n\nThe body is the task as GET /v1/tasks/{id} returns it when the task became ${status}, sent byte for byte on every attempt.\n\n${SIGNING}`,
      security: [],
      request: {
        headers: deliveryHeaders(event),
        body: { required: true, content: { "application/json": { schema: TaskSchema } } },
      },
      responses: {
        "2XX": { description: "Acknowledged: any 2xx status ends the delivery." },
        default: {
          description: "Any other status is a failure: the delivery is retried (at most 5 attempts).",
        },
      },
    });
  }
  registry.registerWebhook({
    method: "post",
    path: "uploadCompleted",
    operationId: "uploadCompleted",
    tags: ["Webhooks"],
    summary: "Upload completed (X-Webhook-Event: upload.completed)",
    description: `A direct upload (POST /v1/uploads/direct with \`webhook\`) has every byte stored: \`state\` is \`complete\`, and its id is usable as \`source_upload_id\`. Sent to that upload's \`webhook\` only.\n\nThe body is the upload as GET /v1/uploads/{id} returns it at completion, sent byte for byte on every attempt.\n\n${SIGNING}`,
    security: [],
    request: {
      headers: deliveryHeaders("upload.completed"),
      body: { required: true, content: { "application/json": { schema: UploadSchema } } },
    },
    responses: {
      "2XX": { description: "Acknowledged: any 2xx status ends the delivery." },
      default: {
        description: "Any other status is a failure: the delivery is retried (at most 5 attempts).",
      },
    },
  });
}
