import { Webhook } from "standardwebhooks";
import { describe, expect, inject, it } from "vitest";
import { attempts, consume, delivery, endedTask, enqueueHeld, receiverEndpoint } from "./support";

/**
 * Sending a webhook has nothing to do with media (issue 32): its name is resolved by the Worker over DNS over
 * HTTPS and checked with the shared address policy, so deliveries leave while the media engine is stopped or
 * cannot start. Before, every attempt asked the engine's /v1/resolve and, with the engine down, was "not sent:
 * the address check is unavailable".
 */

/** Engines that are down: a stopped process (nothing listens on the port), and the Container binding without a runtime. */
const DOWN: [string, Partial<Env>][] = [
  ["a stopped engine process", { ENGINE_URL: "http://127.0.0.1:9" }],
  ["a container that cannot start", { ENGINE_URL: "" }],
];

async function deliverWithEngineDown(webhookUrl: (receiver: string) => string, bindings: Partial<Env>) {
  const endpoint = await receiverEndpoint({ statuses: [200] });
  const { account, task, body } = await endedTask(webhookUrl(endpoint.url));
  const id = (await enqueueHeld(task, "completed", body)).result!.deliveryId;
  const result = await consume(id, { bindings });
  return { endpoint, account, body, id, result };
}

describe("webhooks are delivered while the engine is down", () => {
  it.each(DOWN)("%s: one signed delivery, verified by standardwebhooks", async (_, bindings) => {
    const { endpoint, account, body, id, result } = await deliverWithEngineDown((url) => url, bindings);
    expect(result.explicitAcks).toHaveLength(1);
    expect(await delivery(id)).toMatchObject({ status: "delivered", attemptCount: 1 });
    expect((await attempts(id)).map((a) => [a.statusCode, a.error])).toEqual([[200, null]]);
    const [request] = await endpoint.received();
    expect(request?.headers["webhook-id"]).toBe(id);
    // The published verifier, on the raw body and the headers as received.
    expect(new Webhook(account.webhookSecret).verify(request!.body, request!.headers)).toEqual(
      JSON.parse(body),
    );
  });

  it("a webhook by name (localhost, opened by ALLOW_PRIVATE_SOURCES) is delivered with the engine stopped", async () => {
    const { endpoint, account, body, id } = await deliverWithEngineDown(
      (url) => url.replace("127.0.0.1", "localhost"),
      DOWN[0]![1],
    );
    expect(await delivery(id)).toMatchObject({ status: "delivered", attemptCount: 1 });
    const [request] = await endpoint.received();
    expect(new Webhook(account.webhookSecret).verify(request!.body, request!.headers)).toEqual(
      JSON.parse(body),
    );
  });

  it("a name resolving to a refused address is still refused with the engine stopped (DoH, not the engine)", async () => {
    const endpoint = await receiverEndpoint({ statuses: [200] });
    const { task, body } = await endedTask("https://metadata.test/hook");
    const id = (await enqueueHeld(task, "completed", body)).result!.deliveryId;
    await consume(id, { bindings: DOWN[0]![1], overrides: { allowPrivate: false } });
    expect((await attempts(id))[0]?.error).toBe(
      "not sent: webhook resolves to a private or reserved address",
    );
    expect(await endpoint.received()).toEqual([]);
    const asked = (await (await fetch(inject("dohUrl").replace(/dns-query$/, "_asked"))).json()) as string[];
    expect(asked).toContain("metadata.test A");
  });
});
