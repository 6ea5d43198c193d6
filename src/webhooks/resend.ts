import { and, desc, eq } from "drizzle-orm";
import { ulid } from "ulid";
import type { Db } from "../db/client";
import { webhookDeliveries } from "../db/schema";
import { type Rule, takeSlot } from "../users/throttle";

/**
 * Resends of one task, whoever asks: 3 a minute. Enough to retry after fixing an endpoint, too few to turn the
 * service into a flood of signed requests at someone's URL (20 resends once made 20 deliveries in 1.4 s).
 */
export const RESEND_PER_TASK: Rule = { limit: 3, windowSeconds: 60 };
/**
 * Resends of all of an account's tasks together: 10 a minute. Per task alone, 20 tasks gave 60 signed
 * deliveries to one URL in 1.8 s (issue 40); a customer fixing an endpoint resends a few tasks, not dozens.
 */
export const RESEND_PER_ACCOUNT: Rule = { limit: 10, windowSeconds: 60 };

export type Resend =
  | { ok: true; deliveryId: string; event: string }
  | { ok: false; reason: "not_found" }
  | { ok: false; reason: "rate_limited"; retryAfterSeconds: number; message: string };

/**
 * Sends a task's last webhook event again, on the customer's request: a new delivery (a new webhook-id, as it
 * is a new message, not a retry) of the same stored body to the same URL, with the full retry schedule, signed
 * by the account's secrets at the time of each attempt. Not found when the task (of this account) has no
 * delivery; refused, with nothing sent, past RESEND_PER_TASK or RESEND_PER_ACCOUNT (the task's slot is taken
 * first: a resend the account limit refuses still counts against its task, which only ever errs on the side
 * of fewer deliveries).
 */
export async function resendLastEvent(
  db: Db,
  env: Pick<Env, "THROTTLE" | "WEBHOOK_QUEUE">,
  input: { accountId: string; taskId: string },
  now: number,
): Promise<Resend> {
  const last = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.taskId, input.taskId), eq(webhookDeliveries.accountId, input.accountId)))
    .orderBy(desc(webhookDeliveries.id))
    .get();
  if (!last) return { ok: false, reason: "not_found" };
  const slot = await takeSlot(env, { subject: `resend:${input.taskId}`, rule: RESEND_PER_TASK }, now);
  if (slot.blocked)
    return {
      ok: false,
      reason: "rate_limited",
      retryAfterSeconds: slot.retryAfterSeconds,
      message: `This task's last event was resent ${RESEND_PER_TASK.limit} times in the last minute.`,
    };
  const account = await takeSlot(
    env,
    { subject: `resend-account:${input.accountId}`, rule: RESEND_PER_ACCOUNT },
    now,
  );
  if (account.blocked)
    return {
      ok: false,
      reason: "rate_limited",
      retryAfterSeconds: account.retryAfterSeconds,
      message: `Your account resent ${RESEND_PER_ACCOUNT.limit} webhook events in the last minute.`,
    };
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
  await env.WEBHOOK_QUEUE.send({ deliveryId: id });
  return { ok: true, deliveryId: id, event: last.event };
}
