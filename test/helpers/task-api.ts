import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { creditLedger } from "../../src/db/schema";
import type { TaskView } from "../../src/tasks/serialize";
import { call, db } from "./api";

export function createTaskCall(key: string, body: unknown) {
  return call("/v1/tasks", { method: "POST", key, json: body });
}

export async function getTaskView(key: string, id: string) {
  const response = await call(`/v1/tasks/${id}`, { key });
  expect(response.status).toBe(200);
  return (await response.json()) as TaskView;
}

/**
 * Polls GET /v1/tasks/{id} until `done` holds (real queue → Durable Object → engine in between). The wait is
 * under the worker project's test timeout (60 s), so a slow task fails with its state, not a bare timeout: CI
 * runs npm test beside test:container's image build, and a probe task behind other files' tasks once took
 * over 30 s there (scheduled.test.ts).
 */
export async function waitForTask(
  key: string,
  id: string,
  done: (t: TaskView) => boolean,
  timeoutMs = 50_000,
) {
  const started = Date.now();
  // Waiting for the end, each read is held until then (`Prefer: wait`, at most 10 s). Any other state is
  // polled, ten times 100 ms apart and then once a second: a key may read 60 times a minute, and polling at
  // 100 ms spent that in 6 s, after which the 429's Retry-After (up to a minute) outlasted the test's 30 s
  // (started-webhook.test.ts, beside another file's jobs in the shared engine).
  const headers = done === terminal ? { Prefer: "wait=10" } : undefined;
  for (let reads = 1; ; reads++) {
    const response = await call(`/v1/tasks/${id}`, { key, headers });
    // Polling past the key's 60 reads a minute (a task that takes over ~6 s on a loaded machine, behind other
    // files' tasks in the shared engine): wait as the 429 says, then read on.
    if (response.status === 429) {
      const retryAfter = Number(response.headers.get("retry-after") ?? "1");
      await new Promise((r) => setTimeout(r, Math.max(1, retryAfter) * 1000));
      if (Date.now() - started > timeoutMs) throw new Error(`task ${id}: still 429 after ${timeoutMs} ms`);
      continue;
    }
    expect(response.status).toBe(200);
    const task = (await response.json()) as TaskView;
    if (done(task)) return task;
    if (Date.now() - started > timeoutMs)
      throw new Error(`task ${id} still ${task.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, reads < 10 ? 100 : 1000));
  }
}

export const terminal = (t: TaskView) => ["succeeded", "failed", "canceled"].includes(t.status);

/** The task's ledger rows as [kind, amount]. */
export async function taskLedger(taskId: string) {
  const rows = await db().select().from(creditLedger).where(eq(creditLedger.taskId, taskId)).all();
  return rows.map((r) => [r.kind, r.amount] as const).sort();
}
