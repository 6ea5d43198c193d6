/**
 * readTask (src/tasks/query.ts): ended tasks are kept in the isolate until min(expires_at, 60 s), because their
 * row does not change before expires_at; running tasks are always read from D1.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { tasks } from "../../src/db/schema";
import { readTask } from "../../src/tasks/query";
import { call, db, newAccount } from "../helpers/api";
import { insertTask } from "../helpers/tasks";

describe("readTask", () => {
  it("a running task is read from D1 every time", async () => {
    const { accountId } = await newAccount();
    const row = await insertTask(accountId, { status: "processing", startedAt: Date.now() });
    expect((await readTask(db(), row.id))?.status).toBe("processing");
    await db()
      .update(tasks)
      .set({ status: "succeeded", completedAt: Date.now() })
      .where(eq(tasks.id, row.id));
    expect((await readTask(db(), row.id))?.status).toBe("succeeded");
  });

  it("an ended task is kept until its outputs expire, then read again", async () => {
    const { accountId } = await newAccount();
    const now = Date.now();
    const row = await insertTask(accountId, { status: "succeeded", completedAt: now, expiresAt: now + 5000 });
    expect((await readTask(db(), row.id, now))?.dataRemoved).toBe(false);
    // What the runner does at expires_at: the outputs go, data_removed is set.
    await db().update(tasks).set({ dataRemoved: true, outputs: "[]" }).where(eq(tasks.id, row.id));
    expect((await readTask(db(), row.id, now + 4999))?.dataRemoved).toBe(false);
    expect((await readTask(db(), row.id, now + 5000))?.dataRemoved).toBe(true);
  });

  it("an ended task is kept at most 60 s", async () => {
    const { accountId } = await newAccount();
    const now = Date.now();
    const row = await insertTask(accountId, {
      status: "failed",
      errorCode: "SOURCE_UNREACHABLE",
      completedAt: now,
    });
    await readTask(db(), row.id, now);
    await db().update(tasks).set({ errorMessage: "changed" }).where(eq(tasks.id, row.id));
    expect((await readTask(db(), row.id, now + 59_999))?.errorMessage).toBeNull();
    expect((await readTask(db(), row.id, now + 60_000))?.errorMessage).toBe("changed");
  });

  it("a kept task is still only its owner's", async () => {
    const owner = await newAccount();
    const stranger = await newAccount();
    const row = await insertTask(owner.accountId, { status: "canceled", completedAt: Date.now() });
    expect((await call(`/v1/tasks/${row.id}`, { key: owner.key })).status).toBe(200);
    expect((await call(`/v1/tasks/${row.id}`, { key: stranger.key })).status).toBe(404);
    expect((await call(`/v1/tasks/${row.id}`, { key: owner.key })).status).toBe(200);
  });
});
