import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { webhookAttempts, webhookDeliveries } from "../../src/db/schema";
import { handleWebhookBatch, handleWebhookDeadLetters } from "../../src/webhooks/consumer";
import type { WebhookMessage } from "../../src/webhooks/enqueue";
import { db } from "../helpers/api";
import { attempts, consume, delivery, endedTask, enqueueHeld, receiverEndpoint } from "./support";

/**
 * The consumer driven by hand (createMessageBatch/getQueueResult): the test plays the queue, so it can
 * redeliver a message, deliver it twice at once, or shorten the timeout.
 */
async function heldDelivery(script: Parameters<typeof receiverEndpoint>[0]) {
  const endpoint = await receiverEndpoint(script);
  const { task, body } = await endedTask(endpoint.url);
  const { result } = await enqueueHeld(task, "completed", body);
  return { endpoint, id: result!.deliveryId, body };
}

describe("redelivered and duplicate messages", () => {
  it("a message redelivered after success sends nothing and records nothing", async () => {
    const { endpoint, id } = await heldDelivery({ statuses: [200] });
    const first = await consume(id, { messageId: "m-1", attempts: 1 });
    expect(first.explicitAcks).toEqual(["m-1"]);
    expect(first.retryMessages).toEqual([]);

    const again = await consume(id, { messageId: "m-1", attempts: 2 });
    expect(again.explicitAcks).toEqual(["m-1"]);
    expect(again.retryMessages).toEqual([]);
    expect(await endpoint.received()).toHaveLength(1);
    expect(await attempts(id)).toHaveLength(1);
    expect(await delivery(id)).toMatchObject({ status: "delivered", attemptCount: 1 });
  });

  it("a failed attempt asks for the schedule's delay; a redelivery before it is due sends nothing", async () => {
    const { endpoint, id } = await heldDelivery({ statuses: [500, 200] });
    const overrides = { delaysSeconds: [0, 60, 60, 60, 60] };
    const first = await consume(id, { messageId: "m-2", overrides });
    expect(first.retryMessages).toEqual([{ msgId: "m-2" }]);
    expect(first.retryDelays).toEqual([60]);
    const row = await delivery(id);
    expect(row).toMatchObject({ status: "pending", attemptCount: 1 });
    expect(row!.nextAttemptAt! - Date.now()).toBeGreaterThan(55_000);

    const early = await consume(id, { messageId: "m-2", attempts: 2, overrides });
    expect(early.retryMessages).toEqual([{ msgId: "m-2" }]);
    expect(early.retryDelays[0]).toBeGreaterThan(55);
    expect(early.retryDelays[0]).toBeLessThanOrEqual(60);
    expect(await endpoint.received()).toHaveLength(1);
    expect((await attempts(id)).map((a) => a.attempt)).toEqual([1]);

    // Once due (here: the schedule moved to now), the same message carries on with attempt 2.
    await db()
      .update(webhookDeliveries)
      .set({ nextAttemptAt: Date.now() })
      .where(eq(webhookDeliveries.id, id));
    const due = await consume(id, { messageId: "m-2", attempts: 3, overrides });
    expect(due.explicitAcks).toEqual(["m-2"]);
    expect((await attempts(id)).map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 200],
    ]);
    expect(await endpoint.received()).toHaveLength(2);
  });

  it("the same message delivered twice at once: one request, one attempt (compare-and-set)", async () => {
    const { endpoint, id } = await heldDelivery({ statuses: [200], delaysMs: [300] });
    const results = await Promise.all([
      consume(id, { messageId: "m-3" }),
      consume(id, { messageId: "m-3" }),
      consume(id, { messageId: "m-3" }),
    ]);
    expect(results.map((r) => r.explicitAcks)).toEqual([["m-3"], ["m-3"], ["m-3"]]);
    expect(await endpoint.received()).toHaveLength(1);
    expect(await attempts(id)).toHaveLength(1);
    expect(await delivery(id)).toMatchObject({ status: "delivered", attemptCount: 1 });
  });

  it("a message arriving while another attempt is in flight waits instead of sending", async () => {
    const { endpoint, id } = await heldDelivery({ statuses: [500], delaysMs: [1_000] });
    const inFlight = consume(id, { messageId: "m-4" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const duplicate = await consume(id, { messageId: "m-4b" });
    expect(duplicate.retryMessages).toEqual([{ msgId: "m-4b" }]);
    expect(duplicate.retryDelays[0]).toBeGreaterThan(15);
    await inFlight;
    expect(await endpoint.received()).toHaveLength(1);
    expect(await attempts(id)).toHaveLength(1);
  });

  it("a delivery whose last attempt was interrupted is dead on redelivery, not attempted a sixth time", async () => {
    const { endpoint, id } = await heldDelivery({ statuses: [200] });
    await db()
      .update(webhookDeliveries)
      .set({ attemptCount: 5, nextAttemptAt: null })
      .where(eq(webhookDeliveries.id, id));
    const result = await consume(id, { messageId: "m-5" });
    expect(result.explicitAcks).toEqual(["m-5"]);
    expect(await endpoint.received()).toHaveLength(0);
    expect(await delivery(id)).toMatchObject({ status: "dead", attemptCount: 5 });
  });

  it("acks messages for unknown deliveries and malformed bodies", async () => {
    expect((await consume("msg_unknown", { messageId: "m-6" })).explicitAcks).toEqual(["m-6"]);
    const batch = createMessageBatch<unknown>("p6-webhooks", [
      { id: "m-7", timestamp: new Date(), attempts: 1, body: { something: "else" } },
      { id: "m-8", timestamp: new Date(), attempts: 1, body: null },
    ]);
    const ctx = createExecutionContext();
    await handleWebhookBatch(batch as MessageBatch<WebhookMessage>, env, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["m-7", "m-8"]);
  });
});

describe("failed attempts", () => {
  it("a timeout is a failure: recorded without a status, retried after delays[1]", async () => {
    const { endpoint, id } = await heldDelivery({ statuses: [200], delaysMs: [3_000] });
    const result = await consume(id, { messageId: "t-1", overrides: { timeoutMs: 300 } });
    expect(result.retryMessages).toEqual([{ msgId: "t-1" }]);
    expect(result.retryDelays).toEqual([1]);
    const [attempt] = await attempts(id);
    expect(attempt).toMatchObject({ attempt: 1, statusCode: null, error: "timeout after 0.3 s" });
    expect(attempt!.latencyMs).toBeGreaterThanOrEqual(250);
    expect(attempt!.latencyMs).toBeLessThan(2_500);
    expect(await endpoint.received()).toHaveLength(1);
    expect(await delivery(id)).toMatchObject({ status: "pending", attemptCount: 1 });
  });

  it("a refused connection is a failure", async () => {
    const { task, body } = await endedTask("http://127.0.0.1:9/hook");
    const id = (await enqueueHeld(task, "completed", body)).result!.deliveryId;
    const result = await consume(id, { messageId: "r-1" });
    expect(result.retryMessages).toEqual([{ msgId: "r-1" }]);
    expect(result.retryDelays).toEqual([1]);
    expect(await attempts(id)).toMatchObject([
      { attempt: 1, statusCode: null, error: "connection refused or lost" },
    ]);
  });

  it("a URL that became forbidden fails the attempt without any request", async () => {
    const { endpoint, id } = await heldDelivery({ statuses: [200] });
    const result = await consume(id, { messageId: "f-1", overrides: { allowPrivate: false } });
    expect(result.retryMessages).toEqual([{ msgId: "f-1" }]);
    expect(result.retryDelays).toEqual([1]);
    expect(await endpoint.received()).toHaveLength(0);
    expect(await attempts(id)).toMatchObject([
      {
        attempt: 1,
        statusCode: null,
        latencyMs: 0,
        error: "not sent: The webhook URL points to a private or reserved address.",
      },
    ]);
  });

  it("link-local (cloud metadata) is refused even where private addresses are allowed", async () => {
    const { task, body } = await endedTask("http://169.254.169.254/latest/meta-data");
    const id = (await enqueueHeld(task, "completed", body)).result!.deliveryId;
    await consume(id, { messageId: "f-2" });
    expect((await attempts(id))[0]?.error).toMatch(/^not sent: /);
  });
});

describe("dead letters", () => {
  it("a delivery left pending and overdue is marked dead; one still scheduled is left alone", async () => {
    const overdue = await heldDelivery({});
    const scheduled = await heldDelivery({});
    await db()
      .update(webhookDeliveries)
      .set({ attemptCount: 2, nextAttemptAt: Date.now() + 60_000 })
      .where(eq(webhookDeliveries.id, scheduled.id));
    const batch = createMessageBatch<WebhookMessage>("p6-webhooks-dlq", [
      { id: "d-1", timestamp: new Date(), attempts: 1, body: { deliveryId: overdue.id } },
      { id: "d-2", timestamp: new Date(), attempts: 1, body: { deliveryId: scheduled.id } },
    ]);
    await handleWebhookDeadLetters(batch, env);
    expect((await delivery(overdue.id))?.status).toBe("dead");
    expect((await delivery(scheduled.id))?.status).toBe("pending");
    expect(
      await db().select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, overdue.id)).all(),
    ).toEqual([]);
  });
});
