import { createScheduledController, env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { tasks } from "../../src/db/schema";
import { storeFile } from "../../src/files/store";
import worker from "../../src/index";
import { requeueStaleTasks } from "../../src/tasks/queue";
import { db, newAccount } from "../helpers/api";
import { media } from "../helpers/media";
import { terminal, waitForTask } from "../helpers/task-api";
import { insertTask } from "../helpers/tasks";

async function runCron() {
  await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }), env);
}

describe("the every-minute cron", () => {
  it("re-queues a task whose queue message was lost, and it runs", async () => {
    const { accountId, key } = await newAccount({ credits: 10 });
    const lost = await insertTask(accountId, {
      type: "video.probe",
      sourceUrl: media("av.mp4"),
      // An hour old: older than any queued row the earlier files of this workerd left in its database (tasks
      // inserted without a message stay queued, and npm test runs for ~20 minutes), so the cron, longest
      // waiting first, sends it first. Five minutes old, it came after theirs (over 100 of them, or behind
      // their runs in the queue), and did not run within the test's time (CI, and a fresh clone here).
      createdAt: Date.now() - 60 * 60_000,
    });
    await runCron();
    const done = await waitForTask(key, lost.id, terminal);
    expect(done.status).toBe("succeeded");
  });

  it("a backlog of over 100 lost tasks: the longest waiting are sent first", async () => {
    const { accountId } = await newAccount();
    const now = Date.now();
    const oldest = await insertTask(accountId, { createdAt: now - 2 * 60 * 60_000 });
    // Inserted after it; the order is the query's own (ORDER BY created_at), not the primary key's by chance.
    const backlog = [];
    for (let i = 0; i < 110; i++)
      backlog.push(await insertTask(accountId, { createdAt: now - 10 * 60_000 + i }));
    const sent: string[] = [];
    const queue = {
      sendBatch: async (messages: { body: { taskId: string } }[]) =>
        void sent.push(...messages.map((m) => m.body.taskId)),
    };
    try {
      await requeueStaleTasks({ ...env, TASK_QUEUE: queue } as unknown as Env, createDb(env.DB), now);
      expect(sent).toHaveLength(100);
      expect(sent[0]).toBe(oldest.id);
    } finally {
      // Not left queued for another file's cron.
      await db().update(tasks).set({ status: "failed" }).where(eq(tasks.accountId, accountId));
    }
  });

  it("deletes synchronous outputs past their expiry", async () => {
    const { accountId } = await newAccount();
    const now = Date.now();
    const file = await storeFile(db(), env.FILES, {
      accountId,
      requestId: "01JD5Z8X4QK3M7R2T9V6W1Y0AB",
      name: "old.bin",
      contentType: "application/octet-stream",
      body: new Uint8Array([1, 2, 3]),
      sizeBytes: 3,
      expiresAt: now - 1,
      now: now - 86_400_000,
    });
    await runCron();
    expect(await env.FILES.head(file.r2Key)).toBeNull();
  });
});
