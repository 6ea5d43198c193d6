import { and, eq, notExists, type SQL, sql } from "drizzle-orm";
import { ulid } from "ulid";
import type { Db } from "../db/client";
import { tasks, webhookDeliveries } from "../db/schema";
import { eventWanted, type WebhookEvent } from "./events";

/** The queue message: the delivery row carries everything else, so a message stays tiny and replay-safe. */
export type WebhookMessage = { deliveryId: string };

export type EnqueueContext = {
  db: Db;
  queue: Queue<WebhookMessage>;
  now: number;
  /** Wait before the first attempt (config.webhookRetryDelaysSeconds[0]); 0, at once, by default. */
  firstDelaySeconds?: number;
};

export type WebhookTask = {
  id: string;
  accountId: string;
  webhookUrl: string | null;
  /** tasks.webhook_events: JSON array text, or null for the default events. */
  webhookEvents: string | null;
};

export type EnqueueResult = { deliveryId: string; created: boolean } | null;

/**
 * Records the webhook delivery of a task's terminal event and queues its first attempt. `body` is the task
 * as GET returns it at the event (JSON text); it is stored and sent byte for byte on every attempt.
 *
 * Returns null when the task has no webhook or its filter leaves the event out. One delivery per (task,
 * event): the row is inserted by a single conditional statement, so a repeated call, even a concurrent one,
 * returns the existing delivery (created: false). A repeat re-queues the delivery only while it was never
 * attempted, which covers a first call that stored the row but failed to queue it; an extra message is
 * harmless, as the consumer claims each attempt with a compare-and-set.
 */
export async function enqueueWebhook(
  ctx: EnqueueContext,
  task: WebhookTask,
  event: WebhookEvent,
  body: string,
): Promise<EnqueueResult> {
  if (!task.webhookUrl || !eventWanted(task.webhookEvents, event)) return null;
  const { db } = ctx;
  const id = `msg_${ulid(ctx.now)}`;
  const delaySeconds = ctx.firstDelaySeconds ?? 0;
  const value = <T>(v: T, column: string) => sql<T>`${v}`.as(column);
  const inserted = await db.insert(webhookDeliveries).select(
    db
      .select({
        id: value(id, "id"),
        taskId: tasks.id,
        uploadId: value(null, "upload_id"),
        accountId: tasks.accountId,
        event: value(event, "event"),
        url: value(task.webhookUrl, "url"),
        body: value(body, "body"),
        status: value("pending" as const, "status"),
        attemptCount: value(0, "attempt_count"),
        nextAttemptAt: value(ctx.now + delaySeconds * 1000, "next_attempt_at"),
        createdAt: value(ctx.now, "created_at"),
        completedAt: value(null, "completed_at"),
      })
      .from(tasks)
      .where(
        and(
          eq(tasks.id, task.id),
          notExists(
            db
              .select({ one: sql`1` })
              .from(webhookDeliveries)
              .where(and(eq(webhookDeliveries.taskId, task.id), eq(webhookDeliveries.event, event))),
          ),
        ),
      ),
  );
  return queueOnce(
    ctx,
    inserted.meta.changes === 1 ? id : null,
    and(eq(webhookDeliveries.taskId, task.id), eq(webhookDeliveries.event, event))!,
    `task ${task.id}`,
  );
}

/**
 * After the one conditional insert of a delivery: queues the new one (`inserted`, its id), or else finds the
 * existing one (`sameEvent`) and re-queues it only while it was never attempted. Shared by the events of
 * tasks and of uploads (upload-events.ts).
 */
export async function queueOnce(
  ctx: EnqueueContext,
  inserted: string | null,
  sameEvent: SQL,
  subject: string,
): Promise<EnqueueResult> {
  const send = (deliveryId: string) =>
    ctx.queue.send({ deliveryId }, { delaySeconds: ctx.firstDelaySeconds ?? 0 });
  if (inserted !== null) {
    await send(inserted);
    return { deliveryId: inserted, created: true };
  }
  const existing = await ctx.db
    .select({
      id: webhookDeliveries.id,
      status: webhookDeliveries.status,
      attempts: webhookDeliveries.attemptCount,
    })
    .from(webhookDeliveries)
    .where(sameEvent)
    .get();
  if (!existing) throw new Error(`enqueueWebhook: ${subject} does not exist`);
  if (existing.status === "pending" && existing.attempts === 0) await send(existing.id);
  return { deliveryId: existing.id, created: false };
}
