import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import type { TaskView } from "../../src/tasks/serialize";
import { newAccount } from "../helpers/api";
import { media } from "../helpers/media";
import { createTaskCall, terminal, waitForTask } from "../helpers/task-api";
import { receiverEndpoint, waitFor } from "../webhooks/support";

const trim = { type: "video.trim", source_url: media("av.mp4"), params: { start: 1, end: 3 } };

async function runWithWebhook(filter: string[] | null | undefined) {
  const { key, webhookSecret } = await newAccount({ credits: 10 });
  const endpoint = await receiverEndpoint();
  const response = await createTaskCall(key, {
    ...trim,
    webhook: endpoint.url,
    ...(filter === undefined ? {} : { webhook_events_filter: filter }),
  });
  expect(response.status).toBe(201);
  const { id } = (await response.json()) as { id: string };
  await waitForTask(key, id, terminal);
  return { id, endpoint, webhookSecret };
}

describe("webhook event started (opt-in)", () => {
  it("named in the filter: a signed started delivery (status processing) besides the completed one", async () => {
    const { id, endpoint, webhookSecret } = await runWithWebhook(["started", "completed"]);
    const requests = await waitFor(async () => {
      const got = await endpoint.received();
      return got.length >= 2 ? got : undefined;
    });
    expect(requests.map((r) => r.headers["x-webhook-event"]).sort()).toEqual(["completed", "started"]);
    const started = requests.find((r) => r.headers["x-webhook-event"] === "started")!;
    const completed = requests.find((r) => r.headers["x-webhook-event"] === "completed")!;
    const task = new Webhook(webhookSecret).verify(started.body, started.headers) as TaskView;
    expect(task).toMatchObject({ id, status: "processing", completed_at: null, outputs: [] });
    expect(Date.parse(task.started_at!)).toBeLessThanOrEqual(started.time);
    expect(started.headers["webhook-id"]).not.toBe(completed.headers["webhook-id"]);
    expect((JSON.parse(completed.body) as TaskView).status).toBe("succeeded");
  });

  it.each([
    ["no filter (the default)", undefined],
    ["null", null],
    ["a filter without it", ["completed", "failed"]],
  ])("%s: no started delivery, completed as before", async (_, filter) => {
    const { endpoint } = await runWithWebhook(filter);
    const requests = await waitFor(async () => {
      const got = await endpoint.received();
      return got.length >= 1 ? got : undefined;
    });
    await new Promise((r) => setTimeout(r, 500));
    expect((await endpoint.received()).map((r) => r.headers["x-webhook-event"])).toEqual(["completed"]);
    expect(requests).toHaveLength(1);
  });
});
