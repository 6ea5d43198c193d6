import { asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client";
import {
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  webhookAttempts,
  webhookDeliveries,
} from "../db/schema";

export type DeliveryWithAttempts = WebhookDeliveryRow & { attempts: WebhookAttemptRow[] };

/** A task's webhook deliveries, oldest first, each with every attempt made (two queries, whatever the count). */
export async function taskDeliveries(db: Db, taskId: string): Promise<DeliveryWithAttempts[]> {
  const deliveries = await db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.taskId, taskId))
    .orderBy(asc(webhookDeliveries.id))
    .all();
  if (deliveries.length === 0) return [];
  const attempts = await db
    .select()
    .from(webhookAttempts)
    .where(
      inArray(
        webhookAttempts.deliveryId,
        deliveries.map((d) => d.id),
      ),
    )
    .orderBy(asc(webhookAttempts.deliveryId), asc(webhookAttempts.attempt))
    .all();
  return deliveries.map((delivery) => ({
    ...delivery,
    attempts: attempts.filter((attempt) => attempt.deliveryId === delivery.id),
  }));
}
