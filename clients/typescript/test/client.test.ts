import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import createClient from "openapi-fetch";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import {
  createP6Client,
  createUploads,
  P6ApiError,
  type paths,
  retryAfterMs,
  verifyWebhook,
  waitForTask,
} from "../src/node.ts";

/** A loopback server scripted per test: each request gets the next answer (the last one repeats). */
async function scripted(answers: ((req: IncomingMessage, res: ServerResponse) => void)[]) {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    req.resume();
    req.on("end", () => answers[Math.min(seen.length - 1, answers.length - 1)]!(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    seen,
    baseUrl,
    client: createP6Client({ baseUrl, apiKey: "p6_test:secret", retry: { baseDelayMs: 1 } }),
  };
}
const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (_: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, {
      "Content-Type": status < 400 ? "application/json" : "application/problem+json",
      ...headers,
    });
    res.end(JSON.stringify(body));
  };
const problem = (status: number, code: string) => ({ type: "t", title: "x", status, code });
const task = (status: string) => ({ id: "01JD5Z8X4QK3M7R2T9V6W1Y0AB", status, outputs: [] });

describe("createP6Client", () => {
  it("sends the key, a generated Idempotency-Key on a synchronous operation, and keeps it across 429 retries", async () => {
    const { seen, client } = await scripted([
      json(429, problem(429, "RATE_LIMIT_EXCEEDED"), { "Retry-After": "0" }),
      json(429, problem(429, "RATE_LIMIT_EXCEEDED"), { "Retry-After": "0" }),
      json(200, { id: "r1" }),
    ]);
    const result = await client.POST("/v1/video/probe", {
      body: { source_url: "https://example.com/a.mp4" },
    });
    expect(result.response.status).toBe(200);
    expect(seen).toHaveLength(3);
    expect(seen[0]!.headers.authorization).toBe("Bearer p6_test:secret");
    const keys = seen.map((req) => req.headers["idempotency-key"]);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
  });

  it("keeps a caller's Idempotency-Key and generates none for task creation", async () => {
    const { seen, client } = await scripted([json(200, { id: "r1" })]);
    await client.POST("/v1/video/probe", {
      body: { source_url: "https://example.com/a.mp4" },
      headers: { "Idempotency-Key": "mine" },
    });
    await client.POST("/v1/tasks", {
      body: { type: "video.probe", source_url: "https://example.com/a.mp4" },
    });
    expect(seen.map((req) => req.headers["idempotency-key"])).toEqual(["mine", undefined]);
  });

  // Type-checked by npm run check: the generated paths name the header as the document does, canonically.
  it("a plain openapi-fetch client over the generated types takes Idempotency-Key as spelled", async () => {
    const { seen, baseUrl } = await scripted([json(200, { id: "r1" })]);
    const plain = createClient<paths>({ baseUrl });
    await plain.POST("/v1/video/probe", {
      params: { header: { "Idempotency-Key": "order-1" } },
      body: { source_url: "https://example.com/a.mp4" },
    });
    expect(seen[0]!.headers["idempotency-key"]).toBe("order-1");
  });

  it("retries a 503 only when repeating cannot do the work twice", async () => {
    const unavailable = json(503, problem(503, "SERVICE_UNAVAILABLE"));
    const keyed = await scripted([unavailable, json(200, { id: "r1" })]);
    expect(
      (await keyed.client.POST("/v1/video/probe", { body: { source_url: "https://e.com/a" } })).response
        .status,
    ).toBe(200);
    const unkeyed = await scripted([unavailable, json(201, task("queued"))]);
    const created = await unkeyed.client.POST("/v1/tasks", {
      body: { type: "video.probe", source_url: "https://e.com/a" },
    });
    expect(created.response.status).toBe(503);
    expect(unkeyed.seen).toHaveLength(1);
  });

  it("gives up at 3 retries, and returns at once when Retry-After is longer than it waits", async () => {
    const limited = await scripted([json(429, problem(429, "RATE_LIMIT_EXCEEDED"), { "Retry-After": "0" })]);
    expect((await limited.client.GET("/v1/tasks")).response.status).toBe(429);
    expect(limited.seen).toHaveLength(4);
    const long = await scripted([json(429, problem(429, "RATE_LIMIT_EXCEEDED"), { "Retry-After": "3600" })]);
    const answer = await long.client.GET("/v1/tasks");
    expect(answer.error?.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(long.seen).toHaveLength(1);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(retryAfterMs("3")).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs("soon")).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});

describe("waitForTask", () => {
  it("asks the service to hold its answer (Prefer: wait) and returns the moment it answers, with one request", async () => {
    const { seen, client } = await scripted([
      (req, res) => {
        // A stand-in that honours Prefer: wait, as the service does: the task ends 300 ms later.
        setTimeout(() => json(200, task("succeeded"), { "Preference-Applied": "wait=60" })(req, res), 300);
      },
    ]);
    const started = Date.now();
    expect((await waitForTask(client, "01JD5Z8X4QK3M7R2T9V6W1Y0AB")).status).toBe("succeeded");
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1000);
    expect(seen.map((req) => req.headers.prefer)).toEqual(["wait=60"]);
  });

  it("asks again at once after a held answer without an ending; never waits past its timeout", async () => {
    const held = (status: string) => json(200, task(status), { "Preference-Applied": "wait=1" });
    const { seen, client } = await scripted([held("queued"), held("processing"), held("failed")]);
    const started = Date.now();
    expect((await waitForTask(client, "01JD5Z8X4QK3M7R2T9V6W1Y0AB", { waitSeconds: 5 })).status).toBe(
      "failed",
    );
    // No backoff pause between held answers: a single one (the polling fallback's first, 500 ms) would pass
    // this bound; three loopback requests took 235 ms under a load average of 25 on 2 cores.
    expect(Date.now() - started).toBeLessThan(500);
    expect(seen.map((req) => req.headers.prefer)).toEqual(["wait=5", "wait=5", "wait=5"]);
    const short = await scripted([held("processing")]);
    await expect(
      waitForTask(short.client, "01JD5Z8X4QK3M7R2T9V6W1Y0AB", { timeoutMs: 2_500, waitSeconds: 60 }),
    ).rejects.toThrow(/still processing/);
    expect(short.seen[0]!.headers.prefer).toBe("wait=3");
  });

  it("polls until the task is terminal", async () => {
    const { seen, client } = await scripted([
      json(200, task("queued")),
      json(200, task("processing")),
      json(200, task("succeeded")),
    ]);
    expect((await waitForTask(client, "01JD5Z8X4QK3M7R2T9V6W1Y0AB", { intervalMs: 1 })).status).toBe(
      "succeeded",
    );
    expect(seen.map((req) => req.url)).toEqual(Array(3).fill("/v1/tasks/01JD5Z8X4QK3M7R2T9V6W1Y0AB"));
  });

  it("throws the problem of an error answer", async () => {
    const { client } = await scripted([json(404, problem(404, "RESOURCE_NOT_FOUND"))]);
    await expect(waitForTask(client, "01JD5Z8X4QK3M7R2T9V6W1Y0AB")).rejects.toMatchObject({
      status: 404,
      problem: { code: "RESOURCE_NOT_FOUND" },
    });
  });
});

describe("verifyWebhook", () => {
  const secret = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;
  const body = JSON.stringify(task("succeeded"));

  // The service's own signer is checked against verifyWebhook end to end (test/e2e/tasks.test.ts).
  it("accepts a valid delivery, during a secret rotation too, and returns event and task", () => {
    const now = Math.floor(Date.now() / 1000);
    const other = `whsec_${Buffer.from("another key of thirty-two bytes!").toString("base64")}`;
    const headers = {
      "webhook-id": "msg_1",
      "webhook-timestamp": String(now),
      "webhook-signature": [other, secret]
        .map((s) => new Webhook(s).sign("msg_1", new Date(now * 1000), body))
        .join(" "),
      "x-webhook-event": "completed",
    };
    expect(verifyWebhook(secret, body, new Headers(headers))).toEqual({
      id: "msg_1",
      event: "completed",
      task: JSON.parse(body),
    });
    expect(verifyWebhook(secret, body, headers).task.status).toBe("succeeded");
  });

  it("refuses a changed body, another secret and an old timestamp", () => {
    const old = Math.floor(Date.now() / 1000) - 6 * 60;
    const signed = (timestamp: number) => ({
      "webhook-id": "msg_1",
      "webhook-timestamp": String(timestamp),
      "webhook-signature": new Webhook(secret).sign("msg_1", new Date(timestamp * 1000), body),
    });
    const now = Math.floor(Date.now() / 1000);
    expect(() => verifyWebhook(secret, `${body} `, signed(now))).toThrow();
    expect(() =>
      verifyWebhook(`whsec_${Buffer.from("x".repeat(32)).toString("base64")}`, body, signed(now)),
    ).toThrow();
    expect(() => verifyWebhook(secret, body, signed(old))).toThrow();
  });
});

describe("createUploads over a tus stand-in", () => {
  const ID = "01JD5Z8X4QK3M7R2T9V6W1Y0AB";
  const tus =
    (status: number, headers: Record<string, string> = {}, body = "") =>
    (_: IncomingMessage, res: ServerResponse) => {
      res.writeHead(status, { "Tus-Resumable": "1.0.0", ...headers }).end(body);
    };
  const limited = (retryAfter: string) =>
    tus(
      429,
      { "Retry-After": retryAfter, "Content-Type": "application/problem+json" },
      JSON.stringify(problem(429, "RATE_LIMIT_EXCEEDED")),
    );

  it("waits out a 429's Retry-After, asks the offset and goes on from there", async () => {
    const { seen, baseUrl } = await scripted([
      (req, res) => tus(201, { Location: `http://${req.headers.host}/v1/uploads/${ID}` })(req, res),
      limited("0"),
      tus(200, { "Upload-Offset": "2", "Upload-Length": "5" }),
      tus(204, { "Upload-Offset": "5" }),
    ]);
    const uploads = createUploads({ baseUrl, apiKey: "p6_test:secret" });
    const done = await uploads.upload(new Uint8Array([1, 2, 3, 4, 5]), { filename: "a.bin" });
    expect(done).toEqual({ id: ID, url: `${baseUrl}/v1/uploads/${ID}` });
    expect(seen.map((r) => `${r.method} ${r.headers["upload-offset"] ?? ""}`.trim())).toEqual([
      "POST",
      "PATCH 0",
      "HEAD",
      "PATCH 2",
    ]);
    expect(seen[0]!.headers.authorization).toBe("Bearer p6_test:secret");
    expect(seen[0]!.headers["upload-metadata"]).toBe(`filename ${btoa("a.bin")}`);
  });

  it("counts 429s in a row: each PATCH the service takes starts maxRetries again", async () => {
    const { seen, baseUrl } = await scripted([
      (req, res) => tus(201, { Location: `http://${req.headers.host}/v1/uploads/${ID}` })(req, res),
      limited("0"),
      tus(200, { "Upload-Offset": "0", "Upload-Length": "6" }),
      tus(204, { "Upload-Offset": "2" }),
      limited("0"),
      tus(200, { "Upload-Offset": "2", "Upload-Length": "6" }),
      tus(204, { "Upload-Offset": "4" }),
      tus(204, { "Upload-Offset": "6" }),
    ]);
    const uploads = createUploads({ baseUrl, apiKey: "p6_test:secret", retry: { maxRetries: 1 } });
    const done = await uploads.upload(new Uint8Array(6), { chunkSize: 2 });
    expect(done.id).toBe(ID);
    expect(seen.map((r) => `${r.method} ${r.headers["upload-offset"] ?? ""}`.trim())).toEqual([
      "POST",
      "PATCH 0",
      "HEAD",
      "PATCH 0",
      "PATCH 2",
      "HEAD",
      "PATCH 2",
      "PATCH 4",
    ]);
  });

  it("gives up on a Retry-After past maxDelayMs with the service's problem as a P6ApiError", async () => {
    const { baseUrl } = await scripted([limited("3600")]);
    const uploads = createUploads({ baseUrl, apiKey: "p6_test:secret" });
    const error = await uploads.upload(new Uint8Array([1])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(P6ApiError);
    expect((error as P6ApiError).problem.code).toBe("RATE_LIMIT_EXCEEDED");
  });
});
