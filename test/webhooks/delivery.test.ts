import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { rotateWebhookSecret } from "../../src/webhooks/secrets";
import { db } from "../helpers/api";
import { attempts, delivery, endedTask, enqueue, receiverEndpoint, sleep, waitFor } from "./support";

/**
 * Through the real local queue: enqueueWebhook sends to WEBHOOK_QUEUE, the Worker's queue handler runs the
 * consumer, retries come back after their delay. The test schedule is 0,1,1,1,1 (vitest.config.ts).
 */
describe("webhook delivery through the queue", () => {
  it("retries 500, 500, 500 then succeeds: same webhook-id, fresh timestamps and signatures, every attempt recorded", async () => {
    const endpoint = await receiverEndpoint({ statuses: [500, 500, 500, 200] });
    const { account, task, body } = await endedTask(endpoint.url);
    const created = await enqueue(task, "completed", body);
    const id = created!.deliveryId;

    const done = await waitFor(async () => {
      const row = await delivery(id);
      return row?.status === "delivered" ? row : undefined;
    });
    expect(done).toMatchObject({ attemptCount: 4, nextAttemptAt: null });
    expect(done.completedAt).toEqual(expect.any(Number));

    const requests = await endpoint.received();
    expect(requests).toHaveLength(4);
    for (const request of requests) {
      expect(request.method).toBe("POST");
      expect(request.headers["webhook-id"]).toBe(id);
      expect(request.headers["x-webhook-event"]).toBe("completed");
      expect(request.headers["content-type"]).toBe("application/json");
      expect(request.headers["user-agent"]).toMatch(/^p6-media-api-webhooks\//);
      expect(request.body).toBe(body);
      expect(Math.abs(Number(request.headers["webhook-timestamp"]) * 1000 - request.time)).toBeLessThan(
        2_000,
      );
      // The published verifier, on the raw body and the headers as received.
      expect(new Webhook(account.webhookSecret).verify(request.body, request.headers)).toEqual(
        JSON.parse(body),
      );
    }
    const timestamps = requests.map((r) => Number(r.headers["webhook-timestamp"]));
    expect(timestamps).toEqual([...timestamps].sort((a, b) => a - b));
    expect(new Set(timestamps).size).toBe(4);
    expect(new Set(requests.map((r) => r.headers["webhook-signature"])).size).toBe(4);
    // The schedule: each retry waited at least its delay (1 s in tests).
    for (let i = 1; i < requests.length; i++) {
      expect(requests[i]!.time - requests[i - 1]!.time).toBeGreaterThanOrEqual(900);
    }

    const recorded = await attempts(id);
    expect(recorded.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, 500, "HTTP 500"],
      [2, 500, "HTTP 500"],
      [3, 500, "HTTP 500"],
      [4, 200, null],
    ]);
    for (const a of recorded) {
      expect(a.latencyMs).toBeGreaterThanOrEqual(0);
      expect(a.latencyMs).toBeLessThan(5_000);
    }
  });

  it("gives up after five failures (a 302 is one): dead, and no sixth attempt", async () => {
    const endpoint = await receiverEndpoint({
      statuses: [500, 302, 503, 302, 404],
      location: "https://elsewhere.example/hook",
    });
    const { task, body } = await endedTask(endpoint.url, {
      status: "failed",
      errorCode: "SOURCE_UNREACHABLE",
      errorMessage: "The source answered 404.",
    });
    const id = (await enqueue(task, "failed", body))!.deliveryId;

    const dead = await waitFor(async () => {
      const row = await delivery(id);
      return row?.status === "dead" ? row : undefined;
    });
    expect(dead).toMatchObject({ attemptCount: 5, nextAttemptAt: null });
    expect((await attempts(id)).map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, 500, "HTTP 500"],
      [2, 302, "redirect to https://elsewhere.example/hook not followed"],
      [3, 503, "HTTP 503"],
      [4, 302, "redirect to https://elsewhere.example/hook not followed"],
      [5, 404, "HTTP 404"],
    ]);
    // Longer than one more retry delay: nothing else arrives.
    await sleep(2_500);
    const requests = await endpoint.received();
    expect(requests).toHaveLength(5);
    expect(requests.every((r) => r.headers["x-webhook-event"] === "failed")).toBe(true);
    expect(JSON.parse(requests[0]!.body)).toMatchObject({
      status: "failed",
      error: { code: "SOURCE_UNREACHABLE" },
    });
    expect(await attempts(id)).toHaveLength(5);
  });

  it("during a secret rotation carries two v1 tokens: the old and the new secret both verify", async () => {
    const endpoint = await receiverEndpoint({ statuses: [200] });
    const { account, task, body } = await endedTask(endpoint.url);
    const rotated = await rotateWebhookSecret(db(), account.accountId, Date.now());
    const id = (await enqueue(task, "completed", body))!.deliveryId;
    await waitFor(async () => (await delivery(id))?.status === "delivered");

    const [request] = await endpoint.received();
    const tokens = request!.headers["webhook-signature"]!.split(" ");
    expect(tokens).toHaveLength(2);
    expect(tokens.every((t) => t.startsWith("v1,"))).toBe(true);
    expect(new Webhook(rotated.secret).verify(request!.body, request!.headers)).toEqual(JSON.parse(body));
    expect(new Webhook(account.webhookSecret).verify(request!.body, request!.headers)).toEqual(
      JSON.parse(body),
    );
  });
});
