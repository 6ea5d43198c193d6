import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
} from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { createTask } from "../../src/tasks/create";
import { runnerFor } from "../../src/tasks/queue";
import type { TaskRunner } from "../../src/tasks/runner";
import { markProcessing } from "../../src/tasks/transitions";
import { call, db, newAccount, problem } from "../helpers/api";
import { download, fixture, media, probe, stream } from "../helpers/media";
import { createTaskCall, getTaskView, taskLedger, terminal, waitForTask } from "../helpers/task-api";

describe("POST /v1/tasks → queue → Durable Object → engine", () => {
  it("a video.trim task goes queued → processing → succeeded with a downloadable output", async () => {
    const { key } = await newAccount({ credits: 10 });
    const response = await createTaskCall(key, {
      type: "video.trim",
      source_url: media("av.mp4"),
      params: { start: 1, end: 3 },
    });
    expect(response.status).toBe(201);
    const created = (await response.json()) as { id: string; status: string; urls: { get: string } };
    expect(response.headers.get("location")).toBe(created.urls.get);
    expect(created.status).toBe("queued");
    expect(await taskLedger(created.id)).toEqual([["reserve", -2]]);

    const done = await waitForTask(key, created.id, terminal);
    expect(done.status).toBe("succeeded");
    expect(done.started_at).not.toBeNull();
    expect(done.completed_at).not.toBeNull();
    expect(done.metrics.total_time).toBeGreaterThan(0);
    expect(done.progress).toBe(1);
    expect(done.error).toBeNull();
    expect(done.outputs).toHaveLength(1);
    expect(done.outputs[0]).toMatchObject({ kind: "video", format: "mp4" });
    const probed = await probe((await download(done.outputs[0]!.url)).bytes);
    expect(Number(probed.format.duration)).toBeCloseTo(2, 0);
    expect(stream(probed, "video")?.codec_name).toBe("h264");
    expect(await taskLedger(created.id)).toEqual([["reserve", -2]]);
  });

  it("every registry type runs as a task (probe's result is a json output)", async () => {
    const { key } = await newAccount({ credits: 50 });
    const cases = [
      { type: "video.probe", source_url: media("av.mp4"), kind: "json" },
      { type: "image.watermark", source_url: media("photo.jpg"), params: { text: "x" }, kind: "image" },
      {
        type: "audio.trim",
        source_url: media("audio.mp3"),
        params: { start: 0, duration: 1 },
        kind: "audio",
      },
    ];
    for (const { kind, ...body } of cases) {
      const created = (await (await createTaskCall(key, body)).json()) as { id: string };
      const done = await waitForTask(key, created.id, terminal);
      expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
      expect(done.outputs[0]?.kind).toBe(kind);
    }
  });

  it("a failing task ends failed with {code, message, request_id}, no outputs, refunded", async () => {
    const { key } = await newAccount({ credits: 10 });
    const created = (await (
      await createTaskCall(key, { type: "video.probe", source_url: media("text.mp4") })
    ).json()) as {
      id: string;
    };
    const done = await waitForTask(key, created.id, terminal);
    expect(done.status).toBe("failed");
    expect(done.error).toMatchObject({ code: "CONTENT_TYPE_UNSUPPORTED", request_id: expect.any(String) });
    expect(done.outputs).toEqual([]);
    expect(await taskLedger(created.id)).toEqual([
      ["refund", 1],
      ["reserve", -1],
    ]);
  });

  it("idempotency_key: a repeat returns the original task, 200, Idempotent-Replayed, one reservation", async () => {
    const { key } = await newAccount({ credits: 10 });
    const body = { type: "video.probe", source_url: media("av.mp4"), idempotency_key: "job-42" };
    const first = await createTaskCall(key, body);
    const again = await createTaskCall(key, { ...body, source_url: media("short.mp4") });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const a = (await first.json()) as { id: string };
    const b = (await again.json()) as { id: string };
    expect(b.id).toBe(a.id);
    expect(await taskLedger(a.id)).toEqual([["reserve", -1]]);
  });

  it("402 when the balance cannot cover the reservation; no task is created", async () => {
    const { key } = await newAccount({ credits: 4 });
    const response = await createTaskCall(key, {
      type: "video.watermark",
      source_url: media("av.mp4"),
      params: { text: "x" },
    });
    expect(response.status).toBe(402);
    expect((await problem(response)).code).toBe("INSUFFICIENT_CREDITS");
    const list = (await (await call("/v1/tasks", { key })).json()) as { results: unknown[] };
    expect(list.results).toEqual([]);
  });

  it.each([
    ["type", { type: "video.explode", source_url: "https://example.com/a.mp4" }],
    ["source_url", { type: "video.probe" }],
    ["params.start", { type: "video.trim", source_url: "https://example.com/a.mp4", params: { end: 2 } }],
    ["params.nope", { type: "video.probe", source_url: "https://example.com/a.mp4", params: { nope: 1 } }],
    [
      "webhook_events_filter[0]",
      { type: "video.probe", source_url: "https://example.com/a.mp4", webhook_events_filter: ["exploded"] },
    ],
    [
      "idempotency_key",
      { type: "video.probe", source_url: "https://example.com/a.mp4", idempotency_key: "k".repeat(65) },
    ],
    [
      "webhook",
      { type: "video.probe", source_url: "https://example.com/a.mp4", webhook: "http://10.0.0.8/hook" },
    ],
    ["source_url", { type: "video.probe", source_url: "a.mp4" }],
    ["webhook", { type: "video.probe", source_url: "https://example.com/a.mp4", webhook: "hook" }],
    [
      "params.watermark_url",
      { type: "image.watermark", source_url: "https://example.com/a.png", params: { watermark_url: "logo" } },
    ],
    [
      "webhook",
      {
        type: "video.probe",
        source_url: "https://example.com/a.mp4",
        webhook: "http://169.254.169.254/latest",
      },
    ],
  ])("400 naming %s", async (field, body) => {
    const { key } = await newAccount({ credits: 10 });
    const response = await createTaskCall(key, body);
    expect(response.status).toBe(400);
    expect((await problem(response)).errors?.map((e) => e.field)).toContain(field);
  });

  it("413 and 415 on the body", async () => {
    const { key } = await newAccount({ credits: 10 });
    const big = await createTaskCall(key, {
      type: "video.probe",
      source_url: media("av.mp4"),
      params: { x: "y".repeat(1_100_000) },
    });
    expect(big.status).toBe(413);
    const text = await call("/v1/tasks", {
      method: "POST",
      key,
      headers: { "Content-Type": "text/plain" },
      body: "x",
    });
    expect(text.status).toBe(415);
  });
});

describe("cancel", () => {
  it("while queued → canceled, refunded, never run", async () => {
    const { key } = await newAccount({ credits: 10 });
    const created = (await (
      await createTaskCall(key, { type: "video.probe", source_url: media("av.mp4") })
    ).json()) as {
      id: string;
    };
    const response = await call(`/v1/tasks/${created.id}/cancel`, { method: "POST", key });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe("canceled");
    await new Promise((r) => setTimeout(r, 1500));
    const task = await getTaskView(key, created.id);
    expect(task).toMatchObject({ status: "canceled", started_at: null, outputs: [] });
    expect(await taskLedger(created.id)).toEqual([
      ["refund", 1],
      ["reserve", -1],
    ]);
  });

  it("while processing → canceled, the engine work aborted, refunded, no output", async () => {
    const { key } = await newAccount({ credits: 10 });
    const created = (await (
      await createTaskCall(key, {
        type: "video.extract-audio",
        source_url: fixture("/slow/long.mp4?kbps=200"),
      })
    ).json()) as { id: string };
    await waitForTask(key, created.id, (t) => t.status === "processing");
    const response = await call(`/v1/tasks/${created.id}/cancel`, { method: "POST", key });
    expect(((await response.json()) as { status: string }).status).toBe("canceled");
    await new Promise((r) => setTimeout(r, 1000));
    const task = await getTaskView(key, created.id);
    expect(task).toMatchObject({ status: "canceled", outputs: [] });
    expect(await taskLedger(created.id)).toEqual([
      ["refund", 2],
      ["reserve", -2],
    ]);
  });

  it("is idempotent; 409 for succeeded or failed; 404 for another account's task", async () => {
    const { key } = await newAccount({ credits: 10 });
    const other = await newAccount({ credits: 10 });
    const created = (await (
      await createTaskCall(key, { type: "video.probe", source_url: media("av.mp4") })
    ).json()) as {
      id: string;
    };
    await waitForTask(key, created.id, terminal);
    const conflict = await call(`/v1/tasks/${created.id}/cancel`, { method: "POST", key });
    expect(conflict.status).toBe(409);
    expect((await problem(conflict)).code).toBe("RESOURCE_CONFLICT");
    expect((await call(`/v1/tasks/${created.id}/cancel`, { method: "POST", key: other.key })).status).toBe(
      404,
    );

    const queued = (await (
      await createTaskCall(key, { type: "video.probe", source_url: media("av.mp4") })
    ).json()) as {
      id: string;
    };
    expect((await call(`/v1/tasks/${queued.id}/cancel`, { method: "POST", key })).status).toBe(200);
    const again = await call(`/v1/tasks/${queued.id}/cancel`, { method: "POST", key });
    expect(again.status).toBe(200);
    expect(await taskLedger(queued.id)).toEqual([
      ["refund", 1],
      ["reserve", -1],
    ]);
  });
});

describe("at-least-once delivery and the watchdog", () => {
  it("a redelivered queue message never runs a task twice nor charges twice", async () => {
    const { key } = await newAccount({ credits: 10 });
    const created = (await (
      await createTaskCall(key, { type: "video.probe", source_url: media("av.mp4") })
    ).json()) as {
      id: string;
    };
    await waitForTask(key, created.id, terminal);
    const batch = createMessageBatch("p6-tasks", [
      { id: "m1", timestamp: new Date(), attempts: 2, body: { taskId: created.id } },
      { id: "m2", timestamp: new Date(), attempts: 3, body: { taskId: created.id } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch as MessageBatch<never>, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["m1", "m2"]);
    const state = await runInDurableObject(runnerFor(env, created.id), (_i: TaskRunner, s) =>
      s.storage.kv.get("state"),
    );
    expect(state).toMatchObject({ phase: "ended" });
    expect((await getTaskView(key, created.id)).status).toBe("succeeded");
    expect(await taskLedger(created.id)).toEqual([["reserve", -1]]);
  });

  it("a run that died (state running, alarm retried) is failed INTERNAL and refunded by the watchdog", async () => {
    const { accountId, key } = await newAccount({ credits: 10 });
    const { task } = await createTask(db(), {
      accountId,
      type: "video.probe",
      cost: 1,
      sourceUrl: media("av.mp4"),
      params: {},
      webhookUrl: null,
      webhookEvents: null,
      idempotencyKey: null,
      requestId: "01JD5Z8X4QK3M7R2T9V6W1Y0AB",
      origin: "http://api.test",
      retentionMs: 86_400_000,
      now: Date.now(),
    });
    expect(await markProcessing(db(), task.id, Date.now())).toBe(true);
    const stub = runnerFor(env, task.id);
    await runInDurableObject(stub, async (_instance: TaskRunner, state) => {
      state.storage.kv.put("state", { phase: "running", taskId: task.id, startedAt: Date.now() - 1000 });
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const done = await getTaskView(key, task.id);
    expect(done.status).toBe("failed");
    expect(done.error?.code).toBe("INTERNAL");
    expect(await taskLedger(task.id)).toEqual([
      ["refund", 1],
      ["reserve", -1],
    ]);
  });
});
