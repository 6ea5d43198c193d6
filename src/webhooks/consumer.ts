import { and, eq, isNull, lte, or } from "drizzle-orm";
import { getConfig } from "../config/config";
import { createDb } from "../db/client";
import { webhookDeliveries } from "../db/schema";
import { DEFAULT_TIMEOUT_MS, type DeliverySettings, processDelivery } from "./deliver";
import type { WebhookMessage } from "./enqueue";

/** When a step fails on our side (D1 unavailable, …): try the message again soon; it is not an attempt. */
const INTERNAL_RETRY_SECONDS = 10;

/**
 * The p6-webhooks consumer: one delivery step per message (see processDelivery), messages of a batch in
 * parallel. Retries are explicit message.retry calls with the schedule's delay. `overrides` exists for tests
 * (a short timeout); production uses the configuration.
 */
export async function handleWebhookBatch(
  batch: MessageBatch<WebhookMessage>,
  env: Env,
  _ctx: ExecutionContext,
  overrides: Partial<DeliverySettings> = {},
): Promise<void> {
  const config = getConfig(env);
  const settings: DeliverySettings = {
    delaysSeconds: config.webhookRetryDelaysSeconds,
    allowPrivate: config.allowPrivateSources,
    timeoutMs: DEFAULT_TIMEOUT_MS,
    dohUrl: config.dohUrl,
    egress: config.webhookEgress,
    ...overrides,
  };
  const db = createDb(env.DB);
  await Promise.all(
    batch.messages.map(async (message) => {
      const deliveryId = (message.body as Partial<WebhookMessage> | null)?.deliveryId;
      if (typeof deliveryId !== "string") {
        console.error(
          JSON.stringify({ level: "error", queue: batch.queue, message: "malformed webhook message" }),
        );
        message.ack();
        return;
      }
      try {
        const decision = await processDelivery(db, deliveryId, settings);
        if (decision.action === "ack") message.ack();
        else message.retry({ delaySeconds: decision.delaySeconds });
      } catch (error) {
        console.error(
          JSON.stringify({
            level: "error",
            queue: batch.queue,
            delivery_id: deliveryId,
            error: String(error),
          }),
        );
        message.retry({ delaySeconds: INTERNAL_RETRY_SECONDS });
      }
    }),
  );
}

/**
 * p6-webhooks-dlq: a message the consumer could not finish within the queue's own retries (our side kept
 * failing). The letter is logged; a delivery it leaves pending and overdue — no other message will carry it
 * on — is marked dead, so its state says what happened. One still scheduled has a live message elsewhere.
 */
export async function handleWebhookDeadLetters(batch: MessageBatch<WebhookMessage>, env: Env): Promise<void> {
  const db = createDb(env.DB);
  for (const message of batch.messages) {
    console.error(JSON.stringify({ level: "error", queue: batch.queue, dead_letter: message.body }));
    const deliveryId = (message.body as Partial<WebhookMessage> | null)?.deliveryId;
    if (typeof deliveryId === "string") {
      const now = Date.now();
      await db
        .update(webhookDeliveries)
        .set({ status: "dead", nextAttemptAt: null, completedAt: now })
        .where(
          and(
            eq(webhookDeliveries.id, deliveryId),
            eq(webhookDeliveries.status, "pending"),
            or(isNull(webhookDeliveries.nextAttemptAt), lte(webhookDeliveries.nextAttemptAt, now)),
          ),
        );
    }
    message.ack();
  }
}
