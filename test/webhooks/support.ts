import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { asc, eq } from "drizzle-orm";
import { inject, vi } from "vitest";
import { type TaskRow, webhookAttempts, webhookDeliveries } from "../../src/db/schema";
import type { Connect } from "../../src/fetch/pinned";
import { serializeTask } from "../../src/tasks/serialize";
import { handleWebhookBatch } from "../../src/webhooks/consumer";
import type { DeliverySettings } from "../../src/webhooks/deliver";
import { enqueueWebhook, type WebhookMessage } from "../../src/webhooks/enqueue";
import type { WebhookEvent } from "../../src/webhooks/events";
import { BASE, db, newAccount } from "../helpers/api";
import { insertTask } from "../helpers/tasks";
import type { ReceivedRequest, ReceiverScript } from "../support/webhook-receiver";

let paths = 0;

/** A fresh path on the loopback webhook receiver, answering per `script`. */
export async function receiverEndpoint(script: ReceiverScript = {}) {
  const path = `/hooks/${crypto.randomUUID()}-${++paths}`;
  const response = await fetch(`${inject("webhookReceiverUrl")}/_script${path}`, {
    method: "POST",
    body: JSON.stringify(script),
  });
  if (!response.ok) throw new Error(`receiver script: ${response.status}`);
  return {
    url: `${inject("webhookReceiverUrl")}${path}`,
    received: async () =>
      (await (await fetch(`${inject("webhookReceiverUrl")}/_received${path}`)).json()) as ReceivedRequest[],
  };
}

/** An account and a terminal task with a webhook, and the body the event would carry. */
export async function endedTask(webhookUrl: string, overrides: Partial<TaskRow> = {}) {
  const account = await newAccount();
  const now = Date.now();
  const task = await insertTask(account.accountId, {
    status: "succeeded",
    startedAt: now,
    completedAt: now,
    progress: 1,
    webhookUrl,
    ...overrides,
  });
  const body = JSON.stringify(
    await serializeTask(task, { origin: BASE, fileSigningSecret: "test-file-signing-secret" }),
  );
  return { account, task, body };
}

/** enqueueWebhook on the real local queue (its consumer is the Worker's queue handler). */
export function enqueue(task: TaskRow, event: WebhookEvent, body: string) {
  return enqueueWebhook(
    { db: db(), queue: env.WEBHOOK_QUEUE as Queue<WebhookMessage>, now: Date.now() },
    task,
    event,
    body,
  );
}

/**
 * enqueueWebhook with the test as the queue: the message is handed back instead of sent, so the test drives
 * the consumer itself (createMessageBatch/getQueueResult) with no real consumer racing it.
 */
export async function enqueueHeld(task: TaskRow, event: WebhookEvent, body: string) {
  const sent: { body: WebhookMessage; delaySeconds?: number }[] = [];
  const queue = {
    send: async (message: WebhookMessage, options?: QueueSendOptions) => {
      sent.push({ body: message, delaySeconds: options?.delaySeconds });
    },
    sendBatch: async () => {
      throw new Error("not used");
    },
  } as unknown as Queue<WebhookMessage>;
  const result = await enqueueWebhook({ db: db(), queue, now: Date.now() }, task, event, body);
  return { result, sent };
}

export function delivery(id: string) {
  return db().select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get();
}

export function attempts(deliveryId: string) {
  return db()
    .select()
    .from(webhookAttempts)
    .where(eq(webhookAttempts.deliveryId, deliveryId))
    .orderBy(asc(webhookAttempts.attempt))
    .all();
}

/** Polls until `check` returns a value (not undefined/false), or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error("waitFor: timed out");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the consumer on one hand-made message (as the queue would deliver it, `attempts` times so far) and
 * returns what it told the queue. getQueueResult does not report retry delays, so `retryDelays` collects
 * the delaySeconds of every message.retry call.
 */
export async function consume(
  deliveryId: string,
  options: {
    messageId?: string;
    attempts?: number;
    overrides?: Partial<DeliverySettings>;
    /** Bindings over the test's (e.g. ENGINE_URL of an engine that is down). */
    bindings?: Partial<Env>;
  } = {},
) {
  const batch = createMessageBatch<WebhookMessage>("p6-webhooks", [
    {
      id: options.messageId ?? crypto.randomUUID(),
      timestamp: new Date(),
      attempts: options.attempts ?? 1,
      body: { deliveryId },
    },
  ]);
  const retryDelays: (number | undefined)[] = [];
  for (const message of batch.messages) {
    const retry = message.retry.bind(message);
    vi.spyOn(message, "retry").mockImplementation((retryOptions) => {
      retryDelays.push(retryOptions?.delaySeconds);
      retry(retryOptions);
    });
  }
  const ctx = createExecutionContext();
  await handleWebhookBatch(batch, { ...env, ...options.bindings }, ctx, options.overrides);
  return { ...(await getQueueResult(batch, ctx)), retryDelays };
}

/**
 * A TCP connect for deliveries to public addresses (DNS stand-in names like public.test): nothing leaves this
 * machine. It records where the delivery dialled and refuses, as an unreachable host would.
 */
export function refusingConnect(dialled: string[] = []): Connect {
  return ((address: { hostname: string; port: number }) => {
    dialled.push(`${address.hostname}:${address.port}`);
    const refused = Promise.reject(new Error("connection refused (stand-in for a public address)"));
    refused.catch(() => {});
    return {
      opened: refused,
      closed: refused,
      readable: new ReadableStream(),
      writable: new WritableStream(),
      close: async () => {},
      startTls() {
        return this;
      },
    };
  }) as unknown as Connect;
}
