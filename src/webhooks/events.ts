import type { TaskStatus } from "../db/schema";

/**
 * Webhook event names (X-Webhook-Event). decisions.md §12: canceled is sent only when the filter names it;
 * started (the task's first queued → processing) too.
 */
export const WEBHOOK_EVENTS = ["started", "completed", "failed", "canceled"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** What a task without webhook_events_filter receives. */
export const DEFAULT_WEBHOOK_EVENTS: readonly WebhookEvent[] = ["completed", "failed"];

/** The event a terminal status produces; null for statuses that are not terminal. */
export function eventForStatus(status: TaskStatus): WebhookEvent | null {
  if (status === "succeeded") return "completed";
  if (status === "failed" || status === "canceled") return status;
  return null;
}

/**
 * Whether a task's filter (tasks.webhook_events: a JSON array, or null for the default) lets this event
 * through. An explicit list delivers exactly the events it names. A stored value that is not a JSON array of
 * strings (never written by task creation) falls back to the default rather than dropping the webhook.
 */
export function eventWanted(webhookEvents: string | null, event: WebhookEvent): boolean {
  if (webhookEvents === null) return DEFAULT_WEBHOOK_EVENTS.includes(event);
  let names: unknown;
  try {
    names = JSON.parse(webhookEvents);
  } catch {
    names = null;
  }
  if (!Array.isArray(names) || !names.every((n) => typeof n === "string")) {
    return DEFAULT_WEBHOOK_EVENTS.includes(event);
  }
  return names.includes(event);
}
