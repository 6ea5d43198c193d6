import { Webhook } from "standardwebhooks";
import type { Task } from "./tasks.ts";

export type WebhookEvent = "started" | "completed" | "failed" | "canceled";
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string {
  const value =
    headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()]);
  return (Array.isArray(value) ? value[0] : value) ?? "";
}

/**
 * Verifies a delivery with the Standard Webhooks reference verifier (signature and 5-minute timestamp
 * tolerance) and returns its event and task. `rawBody` is the body exactly as received; throws unless
 * authentic.
 */
export function verifyWebhook(
  secret: string,
  rawBody: string,
  headers: HeaderSource,
): { id: string; event: WebhookEvent; task: Task } {
  const id = header(headers, "webhook-id");
  const task = new Webhook(secret).verify(rawBody, {
    "webhook-id": id,
    "webhook-timestamp": header(headers, "webhook-timestamp"),
    "webhook-signature": header(headers, "webhook-signature"),
  }) as Task;
  return { id, event: header(headers, "x-webhook-event") as WebhookEvent, task };
}
