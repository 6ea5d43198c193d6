import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ffprobeBytes, serveFixtures } from "./media.ts";

const { base, apiKey, webhookSecret } = inject("e2e");
let fixtures: Awaited<ReturnType<typeof serveFixtures>>;
const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
const receiver = http.createServer((req, res) => {
  let body = "";
  req.on("data", (chunk: Buffer) => {
    body += chunk.toString("utf8");
  });
  req.on("end", () => {
    received.push({ headers: req.headers, body });
    res.writeHead(204).end();
  });
});

beforeAll(async () => {
  fixtures = await serveFixtures();
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
});
afterAll(() => {
  fixtures?.close();
  receiver.close();
});

describe("an asynchronous task against npm run dev", () => {
  it("a video.trim task with a webhook: succeeded, a verified completed delivery, a valid trimmed output", async () => {
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const response = await fetch(`${base}/v1/tasks`, {
      method: "POST",
      headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        type: "video.trim",
        source_url: fixtures.media("av.mp4"),
        params: { start: 2, duration: 3 },
        webhook: hook,
      }),
    });
    expect(response.status).toBe(201);
    const { id } = (await response.json()) as { id: string };

    const deadline = Date.now() + 60_000;
    while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(received).toHaveLength(1);
    const delivery = received[0]!;
    expect(delivery.headers["x-webhook-event"]).toBe("completed");
    expect(delivery.headers["webhook-id"]).toMatch(/^msg_/);
    const payload = new Webhook(webhookSecret).verify(delivery.body, {
      "webhook-id": String(delivery.headers["webhook-id"]),
      "webhook-timestamp": String(delivery.headers["webhook-timestamp"]),
      "webhook-signature": String(delivery.headers["webhook-signature"]),
    }) as {
      id: string;
      status: string;
      outputs: { kind: string; url: string }[];
      urls: { get: string; cancel: string };
    };
    expect(payload).toMatchObject({ id, status: "succeeded" });
    expect(payload.urls.cancel).toBe(`${payload.urls.get}/cancel`);

    const task = (await (
      await fetch(`${base}/v1/tasks/${id}`, { headers: { Authorization: `Bearer ${apiKey}` } })
    ).json()) as {
      status: string;
      outputs: { url: string }[];
    };
    expect(task.status).toBe("succeeded");
    const file = await fetch(payload.outputs[0]!.url);
    expect(file.status).toBe(200);
    const probed = await ffprobeBytes(await file.arrayBuffer());
    expect(Number(probed.format.duration)).toBeCloseTo(3, 0);
    expect(probed.streams.find((s) => s.codec_type === "video")?.codec_name).toBe("h264");
  });
});
