import { and, desc, eq } from "drizzle-orm";
import { ulid } from "ulid";
import type { Db } from "../db/client";
import { webhookDeliveries } from "../db/schema";
import type { WebhookMessage } from "./enqueue";

/**
 * Sends a task's last webhook event again, on the customer's request: a new delivery (a new webhook-id, as it
 * is a new message, not a retry) of the same stored body to the same URL, with the full retry schedule, signed
 * by the account's secrets at the time of each attempt. Null when the task (of this account) has no delivery.
 */
export async function resendLastEvent(
  db: Db,
  queue: Queue<WebhookMessage>,
  input: { accountId: string; taskId: string },
  now: number,
) {
  const last = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.taskId, input.taskId), eq(webhookDeliveries.accountId, input.accountId)))
    .orderBy(desc(webhookDeliveries.id))
    .get();
  if (!last) return null;
  const id = `msg_${ulid(now)}`;
  await db.insert(webhookDeliveries).values({
    ...last,
    id,
    status: "pending",
    attemptCount: 0,
    nextAttemptAt: now,
    createdAt: now,
    completedAt: null,
  });
  await queue.send({ deliveryId: id });
  return { deliveryId: id, event: last.event };
}
