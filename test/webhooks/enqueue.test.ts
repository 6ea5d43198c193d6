import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { webhookDeliveries } from "../../src/db/schema";
import { eventForStatus, eventWanted } from "../../src/webhooks/events";
import { db } from "../helpers/api";
import { delivery, endedTask, enqueueHeld } from "./support";

const HOOK = "https://hooks.example.com/p6";

const deliveriesOf = (taskId: string) =>
  db().select().from(webhookDeliveries).where(eq(webhookDeliveries.taskId, taskId)).all();

describe("the events filter", () => {
  it.each([
    ["no filter", null, { completed: true, failed: true, canceled: false }],
    ["completed only", '["completed"]', { completed: true, failed: false, canceled: false }],
    ["failed only", '["failed"]', { completed: false, failed: true, canceled: false }],
    ["canceled named", '["completed","canceled"]', { completed: true, failed: false, canceled: true }],
    ["all three", '["completed","failed","canceled"]', { completed: true, failed: true, canceled: true }],
    ["empty list", "[]", { completed: false, failed: false, canceled: false }],
  ] as const)("%s", (_name, filter, expected) => {
    expect({
      completed: eventWanted(filter, "completed"),
      failed: eventWanted(filter, "failed"),
      canceled: eventWanted(filter, "canceled"),
    }).toEqual(expected);
  });

  it("maps terminal statuses to events", () => {
    expect(
      ["queued", "processing", "succeeded", "failed", "canceled"].map((s) => eventForStatus(s as never)),
    ).toEqual([null, null, "completed", "failed", "canceled"]);
  });
});

describe("enqueueWebhook", () => {
  it("stores the delivery (msg_ id, body snapshot, pending) and queues { deliveryId } at once", async () => {
    const { task, body } = await endedTask(HOOK);
    const { result, sent } = await enqueueHeld(task, "completed", body);
    expect(result).toEqual({
      deliveryId: expect.stringMatching(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/),
      created: true,
    });
    expect(sent).toEqual([{ body: { deliveryId: result!.deliveryId }, delaySeconds: 0 }]);
    const row = await delivery(result!.deliveryId);
    expect(row).toMatchObject({
      taskId: task.id,
      accountId: task.accountId,
      event: "completed",
      url: HOOK,
      body,
      status: "pending",
      attemptCount: 0,
      completedAt: null,
    });
  });

  it.each([
    ["completed", null],
    ["failed", null],
    ["canceled", '["canceled"]'],
    ["canceled", '["failed","canceled"]'],
  ] as const)("delivers %s with filter %s", async (event, filter) => {
    const { task, body } = await endedTask(HOOK, { webhookEvents: filter });
    const { result, sent } = await enqueueHeld(task, event, body);
    expect(result?.created).toBe(true);
    expect(sent).toHaveLength(1);
  });

  it.each([
    ["canceled", null],
    ["completed", '["failed"]'],
    ["failed", '["completed"]'],
    ["canceled", '["completed","failed"]'],
  ] as const)("creates no delivery for %s with filter %s", async (event, filter) => {
    const { task, body } = await endedTask(HOOK, { webhookEvents: filter });
    const { result, sent } = await enqueueHeld(task, event, body);
    expect(result).toBeNull();
    expect(sent).toHaveLength(0);
    expect(await deliveriesOf(task.id)).toHaveLength(0);
  });

  it("does nothing for a task without a webhook", async () => {
    const { task, body } = await endedTask(HOOK, { webhookUrl: null });
    expect((await enqueueHeld(task, "completed", body)).result).toBeNull();
    expect(await deliveriesOf(task.id)).toHaveLength(0);
  });

  it("is idempotent per (task, event), even when called concurrently", async () => {
    const { task, body } = await endedTask(HOOK, { webhookEvents: '["completed","canceled"]' });
    const calls = await Promise.all([1, 2, 3].map(() => enqueueHeld(task, "completed", body)));
    const ids = new Set(calls.map((c) => c.result?.deliveryId));
    expect(ids.size).toBe(1);
    expect(calls.filter((c) => c.result?.created)).toHaveLength(1);
    const rows = await db()
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.taskId, task.id), eq(webhookDeliveries.event, "completed")))
      .all();
    expect(rows).toHaveLength(1);
    // Another event of the same task is its own delivery.
    expect((await enqueueHeld(task, "canceled", body)).result?.created).toBe(true);
    expect(await deliveriesOf(task.id)).toHaveLength(2);
  });

  it("re-queues an existing delivery only while it was never attempted", async () => {
    const { task, body } = await endedTask(HOOK);
    const first = await enqueueHeld(task, "failed", body);
    const again = await enqueueHeld(task, "failed", body);
    expect(again.result).toEqual({ deliveryId: first.result!.deliveryId, created: false });
    expect(again.sent).toHaveLength(1);
    await db()
      .update(webhookDeliveries)
      .set({ attemptCount: 1 })
      .where(eq(webhookDeliveries.id, first.result!.deliveryId));
    expect((await enqueueHeld(task, "failed", body)).sent).toHaveLength(0);
  });
});
