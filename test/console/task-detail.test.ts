import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { webhookAttempts, webhookDeliveries } from "../../src/db/schema";
import { csrfOf } from "../dashboard/client";
import { db } from "../helpers/api";
import { insertTask } from "../helpers/tasks";
import { signedUp } from "./support";

const accountOf = async (email: string) =>
  (await env.DB.prepare("SELECT account_id FROM users WHERE email = ?")
    .bind(email.toLowerCase())
    .first<{ account_id: string }>())!.account_id;

const deliveriesOf = async (taskId: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE task_id = ?")
    .bind(taskId)
    .first<{ n: number }>())!.n;

/** A succeeded task of the account with one delivery: a 500 ("server error") first, then a 204. */
async function deliveredTask(accountId: string) {
  const task = await insertTask(accountId, { status: "succeeded", webhookUrl: "http://127.0.0.1:9/hook" });
  const deliveryId = `msg_${task.id}`;
  const at = Date.now() - 10_000;
  await db()
    .insert(webhookDeliveries)
    .values({
      id: deliveryId,
      taskId: task.id,
      accountId,
      event: "completed",
      url: "http://127.0.0.1:9/hook",
      body: "{}",
      status: "delivered",
      attemptCount: 2,
      nextAttemptAt: null,
      createdAt: at,
      completedAt: at + 5000,
    });
  await db()
    .insert(webhookAttempts)
    .values([
      {
        id: `att_${task.id}_1`,
        deliveryId,
        attempt: 1,
        statusCode: 500,
        latencyMs: 812,
        error: "HTTP 500 from receiver",
        createdAt: at,
      },
      {
        id: `att_${task.id}_2`,
        deliveryId,
        attempt: 2,
        statusCode: 204,
        latencyMs: 37,
        error: null,
        createdAt: at + 5000,
      },
    ]);
  return task;
}

describe("console task detail", () => {
  it("is linked from the task list and shows the task's fields and every webhook attempt", async () => {
    const { client, email } = await signedUp();
    const task = await deliveredTask(await accountOf(email));
    const list = await (await client.get("/console/tasks")).text();
    expect(list).toContain(`href="/console/tasks/${task.id}"`);

    const page = await client.get(`/console/tasks/${task.id}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(task.id);
    expect(html).toContain("image.watermark");
    expect(html).toContain("succeeded");
    expect(html).toContain(`msg_${task.id}`);
    expect(html).toContain("http://127.0.0.1:9/hook");
    const attempt = (n: number) =>
      html.slice(html.indexOf(`data-id="att_${task.id}_${n}"`)).split("</tr>")[0]!;
    expect(attempt(1)).toContain(">500<");
    expect(attempt(1)).toContain("812 ms");
    expect(attempt(1)).toContain("HTTP 500 from receiver");
    expect(attempt(2)).toContain(">204<");
    expect(attempt(2)).toContain("37 ms");
    expect(html).toContain('name="from" value="task"');
  });

  it("resend from the page: 303 back to it, then the per-task limit as a message there, shown once", async () => {
    const { client, email } = await signedUp();
    const task = await deliveredTask(await accountOf(email));
    const path = `/console/tasks/${task.id}`;
    const form = async () => ({
      _csrf: csrfOf(await (await client.get(path)).text()),
      task_id: task.id,
      from: "task",
    });
    for (let i = 0; i < 3; i++) {
      const resent = await client.post("/console/webhooks/resend", await form());
      expect(resent.status).toBe(303);
      expect(resent.headers.get("location")).toBe(`${path}?done=resent`);
    }
    expect(await (await client.get(`${path}?done=resent`)).text()).toContain("queued for delivery again");
    // Refused: back to the task page (a GET, so a reload sends nothing), which says why once.
    const refused = await client.post("/console/webhooks/resend", await form());
    expect(refused.status).toBe(303);
    expect(refused.headers.get("location")).toBe(path);
    const html = await (await client.get(path)).text();
    expect(html).toContain(`Task <code>${task.id}</code>`);
    expect(html).toContain("resent 3 times in the last minute");
    const wait = Number(/Nothing was sent; try again in (\d+) s\./.exec(html)?.[1]);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(await (await client.get(path)).text()).not.toContain("Nothing was sent");
    expect(await deliveriesOf(task.id)).toBe(1 + 3);
  });

  it("another account's task is a 404 page, and its resend from a task page too, sending nothing", async () => {
    const owner = await signedUp();
    const task = await deliveredTask(await accountOf(owner.email));
    const { client } = await signedUp();
    const page = await client.get(`/console/tasks/${task.id}`);
    expect(page.status).toBe(404);
    const html = await page.text();
    expect(html).toContain("This task does not exist.");
    expect(html).not.toContain(`msg_${task.id}`);
    expect((await client.get("/console/tasks/not-a-task-id")).status).toBe(404);
    const token = csrfOf(await (await client.get("/console/tasks")).text());
    const resent = await client.post("/console/webhooks/resend", {
      _csrf: token,
      task_id: task.id,
      from: "task",
    });
    expect(resent.status).toBe(404);
    expect(await deliveriesOf(task.id)).toBe(1);
  });

  it("a pipeline's steps: each with its status, its result or error, and its outputs", async () => {
    const { client, email } = await signedUp();
    const accountId = await accountOf(email);
    const task = await insertTask(accountId, {
      type: "pipeline",
      status: "failed",
      errorCode: "VALIDATION_INVALID_ARGUMENT",
      errorMessage: "time (5 s) is beyond the video's duration (2 s)",
      outputs: JSON.stringify([
        {
          kind: "video",
          file_id: "01JD5Z8X4QK3M7R2T9V6W1Y0AC",
          name: "clip.mp4",
          step: "clip",
          format: "mp4",
        },
      ]),
      steps: JSON.stringify([
        { name: "clip", type: "video.trim", status: "succeeded", result: { duration: 2 }, error: null },
        {
          name: "poster",
          type: "video.extract-cover",
          status: "failed",
          result: null,
          error: {
            code: "VALIDATION_INVALID_ARGUMENT",
            message: "time (5 s) is beyond the video's duration (2 s)",
          },
        },
        { name: "info", type: "video.probe", status: "queued", result: null, error: null },
      ]),
    });
    const html = await (await client.get(`/console/tasks/${task.id}`)).text();
    const steps = html.slice(html.indexOf("<h2>Steps</h2>"));
    expect(steps).not.toBe(html);
    const row = (name: string) => steps.slice(steps.indexOf(`<code>${name}</code>`)).split("</tr>")[0]!;
    expect(row("clip")).toContain("video.trim");
    expect(row("clip")).toContain("succeeded");
    expect(row("clip")).toContain("duration 2");
    expect(row("clip")).toMatch(/<a href="[^"]+\/clip\.mp4\?[^"]+">clip\.mp4<\/a>/);
    expect(row("poster")).toContain("failed");
    expect(row("poster")).toContain("VALIDATION_INVALID_ARGUMENT");
    expect(row("info")).toContain("skipped");
  });
});
