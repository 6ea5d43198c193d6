import { and, eq, notExists, sql } from "drizzle-orm";
import { ulid } from "ulid";
import { uploads, webhookDeliveries } from "../db/schema";
import { type EnqueueContext, type EnqueueResult, queueOnce } from "./enqueue";

/**
 * Webhook events of uploads (X-Webhook-Event), beside the tasks' (events.ts). upload.completed: a direct
 * upload (POST /v1/uploads/direct with `webhook`) has every byte stored; the body is the upload as
 * GET /v1/uploads/{id} returns it then.
 */
export const UPLOAD_WEBHOOK_EVENTS = ["upload.completed"] as const;
export type UploadWebhookEvent = (typeof UPLOAD_WEBHOOK_EVENTS)[number];

/**
 * Records the delivery of an upload's event and queues its first attempt: the same rules as a task's
 * (enqueueWebhook), delivered by the same consumer with the same signing and retries. One delivery per
 * (upload, event), by a single conditional statement, so a repeated call (an upload's completion retried
 * after a failed step) returns the existing delivery and re-queues it only while it was never attempted.
 */
export async function enqueueUploadWebhook(
  ctx: EnqueueContext,
  upload: { id: string; webhookUrl: string },
  event: UploadWebhookEvent,
  body: string,
): Promise<EnqueueResult> {
  const { db } = ctx;
  const id = `msg_${ulid(ctx.now)}`;
  const delaySeconds = ctx.firstDelaySeconds ?? 0;
  const value = <T>(v: T, column: string) => sql<T>`${v}`.as(column);
  const sameEvent = and(eq(webhookDeliveries.uploadId, upload.id), eq(webhookDeliveries.event, event));
  const inserted = await db.insert(webhookDeliveries).select(
    db
      .select({
        id: value(id, "id"),
        taskId: value(null, "task_id"),
        uploadId: uploads.id,
        accountId: uploads.accountId,
        event: value(event, "event"),
        url: value(upload.webhookUrl, "url"),
        body: value(body, "body"),
        status: value("pending" as const, "status"),
        attemptCount: value(0, "attempt_count"),
        nextAttemptAt: value(ctx.now + delaySeconds * 1000, "next_attempt_at"),
        createdAt: value(ctx.now, "created_at"),
        completedAt: value(null, "completed_at"),
      })
      .from(uploads)
      .where(
        and(
          eq(uploads.id, upload.id),
          notExists(db.select({ one: sql`1` }).from(webhookDeliveries).where(sameEvent)),
        ),
      ),
  );
  return queueOnce(ctx, inserted.meta.changes === 1 ? id : null, sameEvent!, `upload ${upload.id}`);
}
