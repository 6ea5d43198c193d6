import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook, waitForTask } from "../../clients/typescript/src/index.ts";
import { contractClient } from "./client.ts";
import { ffprobeBytes, serveFixtures } from "./media.ts";
import { e2eService } from "./service.ts";

const { base, apiKey, webhookSecret } = await e2eService();
let fixtures: Awaited<ReturnType<typeof serveFixtures>>;
let api: Awaited<ReturnType<typeof contractClient>>;
const received: { headers: http.IncomingHttpHeaders; body: string; at: number }[] = [];
const receiver = http.createServer((req, res) => {
  let body = "";
  req.on("data", (chunk: Buffer) => {
    body += chunk.toString("utf8");
  });
  req.on("end", () => {
    received.push({ headers: req.headers, body, at: Date.now() });
    res.writeHead(204).end();
  });
});

beforeAll(async () => {
  fixtures = await serveFixtures();
  api = await contractClient(base, apiKey);
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
});
afterAll(() => {
  fixtures?.close();
  receiver.close();
});

describe("an asynchronous task against npm run dev, through the TypeScript client", () => {
  it("a video.trim task with a webhook: succeeded, a verified completed delivery, a valid trimmed output", async () => {
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const created = await api.client.POST("/v1/tasks", {
      body: {
        type: "video.trim",
        source_url: fixtures.media("av.mp4"),
        params: { start: 2, duration: 3 },
        webhook: hook,
      },
    });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);
    const id = created.data!.id;
    expect(created.response.headers.get("location")).toBe(created.data!.urls.get);

    const task = await waitForTask(api.client, id, { timeoutMs: 60_000 });
    const returned = Date.now();
    expect(task.status).toBe("succeeded");

    const deadline = Date.now() + 60_000;
    while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(received).toHaveLength(1);
    const delivery = received[0]!;
    // waitForTask holds a GET open (Prefer: wait) that the task's end releases, not a polling backoff (which
    // lagged the webhook by ~3 s): within 500 ms of it even on a busy CI machine (the gap is printed).
    console.log(`waitForTask returned ${returned - delivery.at} ms after the webhook arrived`);
    expect(returned - delivery.at).toBeLessThan(500);
    expect(delivery.headers["webhook-id"]).toMatch(/^msg_/);
    const verified = verifyWebhook(webhookSecret, delivery.body, delivery.headers);
    expect(verified).toMatchObject({ event: "completed", task: { id, status: "succeeded" } });
    // The published reference verifier agrees with the client's.
    expect(
      new Webhook(webhookSecret).verify(delivery.body, {
        "webhook-id": String(delivery.headers["webhook-id"]),
        "webhook-timestamp": String(delivery.headers["webhook-timestamp"]),
        "webhook-signature": String(delivery.headers["webhook-signature"]),
      }),
    ).toEqual(verified.task);
    expect(() => verifyWebhook(webhookSecret, `${delivery.body} `, delivery.headers)).toThrow();
    // Validated against the document's webhook, once the document declares one.
    api.contract.checkWebhookBody("completed", verified.task);
    expect(verified.task.urls.cancel).toBe(`${verified.task.urls.get}/cancel`);

    const file = await api.download(task.outputs[0]!.url);
    expect(file.status).toBe(200);
    const probed = await ffprobeBytes(await file.arrayBuffer());
    expect(Number(probed.format.duration)).toBeCloseTo(3, 0);
    expect(probed.streams.find((s) => s.codec_type === "video")?.codec_name).toBe("h264");
  });

  it("lists, reads and (too late) cancels the task", async () => {
    const list = await api.client.GET("/v1/tasks", { params: { query: { limit: 5 } } });
    expect(list.response.status).toBe(200);
    const id = list.data!.results[0]!.id;
    const got = await api.client.GET("/v1/tasks/{id}", { params: { path: { id } } });
    expect(got.data?.status).toBe("succeeded");
    const cancel = await api.client.POST("/v1/tasks/{id}/cancel", { params: { path: { id } } });
    expect(cancel.response.status).toBe(409);
    expect(cancel.error?.code).toBe("RESOURCE_CONFLICT");
    const missing = await api.client.GET("/v1/tasks/{id}", {
      params: { path: { id: "01JD5Z8X4QK3M7R2T9V6W1Y0AB" } },
    });
    expect(missing.response.status).toBe(404);
  });

  it("every response matched the OpenAPI document", () => {
    expect(api.contract.checked()).toBeGreaterThanOrEqual(6);
    expect(api.failures()).toEqual([]);
  });
});
