import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { slotsFor } from "../../src/capacity/slots";
import { createEngine } from "../../src/engine";
import { createTask } from "../../src/tasks/create";
import { runnerFor } from "../../src/tasks/queue";
import type { TaskRunner } from "../../src/tasks/runner";
import { loadTask, markProcessing } from "../../src/tasks/transitions";
import { db, newAccount } from "../helpers/api";
import { fixture, media } from "../helpers/media";
import { getTaskView, taskLedger, terminal, waitForTask } from "../helpers/task-api";

type RunnerState = { phase: string; waits?: number; waitingSince?: number; deadline?: number };

const secret = () => inject("engineSecret");
let n = 0;

/** A queued task, not yet handed to its runner (the test hands it over itself). */
async function queuedTask(accountId: string, sourceUrl = media("av.mp4")) {
  const { task } = await createTask(db(), {
    accountId,
    type: "video.probe",
    cost: 1,
    sourceUrl,
    params: {},
    webhookUrl: null,
    webhookEvents: null,
    idempotencyKey: null,
    requestId: `01JD5Z8X4QK3M7R2T9V6W1Y${String(++n).padStart(3, "0")}`,
    origin: "http://api.test",
    retentionMs: 86_400_000,
    now: Date.now(),
  });
  return task;
}

const stateOf = (taskId: string) =>
  runInDurableObject(runnerFor(env, taskId), (_i: TaskRunner, s) => s.storage.kv.get<RunnerState>("state"));

async function until(check: () => Promise<boolean>, timeoutMs = 30_000) {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function startWith(taskId: string, engineUrl: string) {
  const stub = runnerFor(env, taskId);
  await runInDurableObject(stub, (instance: TaskRunner) => {
    // As the runner's own engine (runner.ts engineFor): tasks' jobs are low priority.
    instance.engineOverride = createEngine({ engineUrl, secret: secret(), priority: "low" });
  });
  await stub.start(taskId);
  return stub;
}

describe("a task waits for engine capacity instead of failing", () => {
  it("a burst on a saturated engine: the tasks wait, queued, and all succeed", async () => {
    const small = inject("smallEngines").tasksCapacity;
    const engine = createEngine({ engineUrl: small, secret: secret() });
    // The engine's only slot is busy (its source never answers) and it queues nothing: it answers 503.
    const holdId = `hold-${crypto.randomUUID()}`;
    const hold = new AbortController();
    const held = engine
      // A general slot: a synchronous probe would sit in the engine's light lane (ENGINE_LIGHT_SLOTS) instead.
      .run(
        "video.extract-cover",
        { job_id: holdId, source_url: fixture("/hang"), params: { width: 160 } },
        hold.signal,
      )
      .catch(() => null);
    await until(async () => (await engine.progress(holdId)) !== null);

    const { accountId, key } = await newAccount({ credits: 10 });
    const tasks = await Promise.all([1, 2, 3].map(() => queuedTask(accountId)));
    for (const task of tasks) await startWith(task.id, small);
    for (const task of tasks) {
      await until(async () => ((await stateOf(task.id))?.waits ?? 0) >= 1);
      // Visible as waiting: queued, not started, not failed.
      expect(await getTaskView(key, task.id)).toMatchObject({ status: "queued", started_at: null });
    }
    hold.abort();
    await engine.abort(holdId);
    await held;
    for (const task of tasks) {
      // Read from D1: polling the API this long would meet the key's rate limit.
      await until(
        async () => ["succeeded", "failed"].includes((await loadTask(db(), task.id))?.status ?? ""),
        90_000,
      );
      const done = await getTaskView(key, task.id);
      expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
      expect(await taskLedger(task.id)).toEqual([["reserve", -1]]);
    }
  }, 120_000);

  it("an unreachable engine: the task stays queued, then runs once the engine is back", async () => {
    const { accountId, key } = await newAccount({ credits: 10 });
    const task = await queuedTask(accountId);
    const stub = await startWith(task.id, "http://127.0.0.1:9");
    await until(async () => ((await stateOf(task.id))?.waits ?? 0) >= 1);
    expect((await getTaskView(key, task.id)).status).toBe("queued");
    await runInDurableObject(stub, (instance: TaskRunner) => {
      instance.engineOverride = undefined;
    });
    await runDurableObjectAlarm(stub);
    const done = await waitForTask(key, task.id, terminal);
    expect(done.status).toBe("succeeded");
    expect(await taskLedger(task.id)).toEqual([["reserve", -1]]);
  });

  it("an account over its share: its task waits without touching the engine, then runs", async () => {
    const { accountId, key } = await newAccount({ credits: 10 });
    const slots = slotsFor(env, accountId);
    const holders = Array.from({ length: 16 }, (_, i) => `sync-${i}`); // ENGINE_ACCOUNT_MAX_SLOTS in tests
    for (const holder of holders) await slots.acquire(holder, 16, 60_000);
    const task = await queuedTask(accountId);
    const stub = await startWith(task.id, inject("engineUrl"));
    await until(async () => ((await stateOf(task.id))?.waits ?? 0) >= 1);
    expect(await getTaskView(key, task.id)).toMatchObject({ status: "queued", started_at: null });
    await slots.release(holders[0]!);
    await runDurableObjectAlarm(stub);
    const done = await waitForTask(key, task.id, terminal);
    expect(done.status).toBe("succeeded");
    // The task's own slot was released when it ended.
    expect(await slots.held()).toHaveLength(15);
  });

  it("the wait is bounded: past TASK_MAX_QUEUE_WAIT_SECONDS the task fails SERVICE_UNAVAILABLE, refunded", async () => {
    const { accountId, key } = await newAccount({ credits: 10 });
    const task = await queuedTask(accountId);
    const stub = runnerFor(env, task.id);
    await runInDurableObject(stub, async (instance: TaskRunner, state) => {
      instance.engineOverride = createEngine({ engineUrl: "http://127.0.0.1:9", secret: "x" });
      state.storage.kv.put("state", {
        phase: "scheduled",
        taskId: task.id,
        waits: 40,
        waitingSince: Date.now() - 3_600_000,
      });
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    await runDurableObjectAlarm(stub);
    const done = await getTaskView(key, task.id);
    expect(done).toMatchObject({ status: "failed", error: { code: "SERVICE_UNAVAILABLE" } });
    expect(await taskLedger(task.id)).toEqual([
      ["refund", 1],
      ["reserve", -1],
    ]);
  });
});

describe("the watchdog owns the processing budget", () => {
  it("a run killed past its budget ends PROCESSING_TIMEOUT, refunded, its engine job and slot freed", async () => {
    const { accountId, key } = await newAccount({ credits: 10 });
    const task = await queuedTask(accountId, fixture("/hang"));
    const engine = createEngine({ engineUrl: inject("engineUrl"), secret: secret() });
    // The run as it was when its alarm handler was killed: processing, its engine job running, its slot held.
    const slots = slotsFor(env, accountId);
    await slots.acquire(task.id, 16, 60_000);
    expect(await markProcessing(db(), task.id, Date.now() - 901_000)).toBe(true);
    const job = engine
      .run("video.probe", { job_id: task.id, source_url: fixture("/hang") })
      .catch(() => null);
    await until(async () => (await engine.progress(task.id)) !== null);
    const stub = runnerFor(env, task.id);
    await runInDurableObject(stub, async (_instance: TaskRunner, state) => {
      const startedAt = Date.now() - 901_000;
      state.storage.kv.put("state", {
        phase: "running",
        taskId: task.id,
        startedAt,
        deadline: startedAt + 900_000,
      });
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const done = await getTaskView(key, task.id);
    expect(done.status).toBe("failed");
    expect(done.error?.code).toBe("PROCESSING_TIMEOUT");
    expect(done.error?.message).toMatch(/900 s/);
    expect(await taskLedger(task.id)).toEqual([
      ["refund", 1],
      ["reserve", -1],
    ]);
    expect(await engine.progress(task.id)).toBeNull();
    await job;
    expect(await slots.held()).toEqual([]);
    expect(await stateOf(task.id)).toMatchObject({ phase: "ended" });
  });
});
