import { createScheduledController, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { storeFile } from "../../src/files/store";
import worker from "../../src/index";
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
      createdAt: Date.now() - 5 * 60_000,
    });
    await runCron();
    const done = await waitForTask(key, lost.id, terminal);
    expect(done.status).toBe("succeeded");
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
