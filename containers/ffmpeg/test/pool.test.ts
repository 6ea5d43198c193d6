/**
 * The pool's priorities (pool.ts), driven step by step without ffmpeg: slots reserved for synchronous calls,
 * synchronous calls first in the queue, and tasks still progressing when no synchronous call comes.
 */
import { describe, expect, test } from "vitest";
import { Pool } from "../src/pool.ts";

const never = new AbortController().signal;

/** A job's acquisition, observable without awaiting it. */
function request(pool: Pool, priority: "low" | "normal", signal = never) {
  const job = { granted: false, refused: undefined as unknown, release: () => {} };
  const done = pool.acquire(signal, { priority }).then(
    (release) => {
      job.granted = true;
      job.release = release;
    },
    (err: unknown) => {
      job.refused = err;
    },
  );
  return Object.assign(job, { settled: () => done.then(() => job) });
}

/** A clock that stands still unless a test moves it; timers never fire by themselves. */
function clock(at = { ms: 0 }) {
  return { now: () => at.ms, setTimer: () => {}, at };
}

/** Lets granted promises run their callbacks. */
const tick = () => new Promise((r) => setImmediate(r));

/** A synchronous call that came and went at once: the reserve holds from now on for `reserveHoldMs`. */
async function syncCame(pool: Pool) {
  (await request(pool, "normal").settled()).release();
}

describe("reserved slots (2 slots, 1 reserved) while synchronous calls come", () => {
  test("a task takes a slot but leaves the reserved one to a synchronous call", async () => {
    const pool = new Pool(2, 4, { reserved: 1, ...clock() });
    await syncCame(pool);
    const task = await request(pool, "low").settled();
    expect(task.granted).toBe(true);

    const second = request(pool, "low");
    await tick();
    expect(second.granted).toBe(false);
    expect(pool.stats()).toEqual({ total: 2, busy: 1, queued: 1 });

    const sync = await request(pool, "normal").settled();
    expect(sync.granted).toBe(true);
    expect(pool.stats()).toEqual({ total: 2, busy: 2, queued: 1 });

    // The synchronous call ends: its slot is reserved again, so the waiting task still waits...
    sync.release();
    await tick();
    expect(second.granted).toBe(false);
    // ...until the first task ends and two slots are free.
    task.release();
    await tick();
    expect(second.granted).toBe(true);
    expect(pool.stats()).toEqual({ total: 2, busy: 1, queued: 0 });
  });

  test("tasks still run one after another", async () => {
    const pool = new Pool(2, 4, { reserved: 1, ...clock() });
    await syncCame(pool);
    const tasks = [request(pool, "low"), request(pool, "low")];
    await tick();
    expect(tasks.map((t) => t.granted)).toEqual([true, false]);
    tasks[0]!.release();
    await tick();
    expect(tasks.map((t) => t.granted)).toEqual([true, true]);
    tasks[1]!.release();
    expect(pool.stats()).toEqual({ total: 2, busy: 0, queued: 0 });
  });

  test("a task is refused at once (503) past the first half of the queue", async () => {
    const pool = new Pool(2, 4, { reserved: 1, ...clock() });
    await syncCame(pool);
    const running = request(pool, "low");
    const queued = [request(pool, "low"), request(pool, "low")];
    const refused = await request(pool, "low").settled();
    expect(refused.granted).toBe(false);
    expect(refused.refused).toMatchObject({ code: "SERVICE_UNAVAILABLE" });
    await tick();
    expect(running.granted).toBe(true);
    expect(queued.map((q) => q.granted)).toEqual([false, false]);
  });

  test("the reserve is always below the slot count: a one-slot engine still runs tasks", async () => {
    const pool = new Pool(1, 2, { reserved: 1, ...clock() });
    expect(pool.reserved).toBe(0);
    await syncCame(pool);
    expect((await request(pool, "low").settled()).granted).toBe(true);
  });
});

describe("the reserve lapses when synchronous calls stop (reserveHoldMs 30 s)", () => {
  test("tasks alone use every slot", async () => {
    const pool = new Pool(2, 4, { reserved: 1, ...clock() });
    const tasks = [request(pool, "low"), request(pool, "low")];
    await tick();
    expect(tasks.map((t) => t.granted)).toEqual([true, true]);
  });

  test("30 s after the last synchronous call a waiting task gets the reserved slot", async () => {
    const { at, ...time } = clock();
    let lapse: (() => void) | undefined;
    const pool = new Pool(2, 4, {
      reserved: 1,
      reserveHoldMs: 30_000,
      ...time,
      setTimer: (run) => (lapse = run),
    });
    await syncCame(pool);
    const tasks = [request(pool, "low"), request(pool, "low")];
    at.ms = 29_999;
    await tick();
    expect(tasks.map((t) => t.granted)).toEqual([true, false]);
    // The engine looks again when the reserve lapses, without waiting for the running task to end.
    at.ms = 30_001;
    lapse?.();
    await tick();
    expect(tasks.map((t) => t.granted)).toEqual([true, true]);
  });

  test("a synchronous job still running keeps the reserve past the hold", async () => {
    const { at, ...time } = clock();
    const pool = new Pool(2, 4, { reserved: 1, reserveHoldMs: 30_000, ...time });
    const sync = await request(pool, "normal").settled();
    at.ms = 60_000;
    const task = request(pool, "low");
    await tick();
    expect(task.granted).toBe(false);
    sync.release();
    await tick();
    expect(task.granted).toBe(true);
  });
});

describe("ENGINE_TASK_MIN_SLOTS (2 slots, 1 reserved, tasks may always run 1)", () => {
  test("a synchronous job holding a slot keeps tasks out of the reserved one only without the floor", async () => {
    for (const [floor, expected] of [
      [0, false],
      [1, true],
    ] as const) {
      const pool = new Pool(2, 4, { reserved: 1, lowFloor: floor, ...clock() });
      const sync = await request(pool, "normal").settled();
      const task = request(pool, "low");
      const second = request(pool, "low");
      await tick();
      expect([task.granted, second.granted]).toEqual([expected, false]);
      sync.release();
      await tick();
      // Two slots free (or one beside the running task): the first task runs either way, the second waits.
      expect([task.granted, second.granted]).toEqual([true, false]);
    }
  });
});

describe("synchronous calls first in the queue (1 slot, none reserved)", () => {
  test("a synchronous call that arrives after waiting tasks gets the next slot", async () => {
    const pool = new Pool(1, 4);
    const holder = await request(pool, "low").settled();
    const task = request(pool, "low");
    const sync = request(pool, "normal");
    await tick();
    expect(pool.stats()).toEqual({ total: 1, busy: 1, queued: 2 });

    holder.release();
    await tick();
    expect([sync.granted, task.granted]).toEqual([true, false]);
    sync.release();
    await tick();
    expect(task.granted).toBe(true);
  });

  test("synchronous calls keep their own arrival order, all before a task that came between them", async () => {
    const pool = new Pool(1, 4);
    const holder = await request(pool, "normal").settled();
    const calls = { a: request(pool, "normal"), task: request(pool, "low"), c: request(pool, "normal") };
    const order: string[] = [];
    let current = holder;
    for (let i = 0; i < 3; i++) {
      current.release();
      await tick();
      const [name, granted] = Object.entries(calls).find(([n, c]) => c.granted && !order.includes(n))!;
      order.push(name);
      current = granted;
    }
    expect(order).toEqual(["a", "c", "task"]);
  });

  test("a task does not overtake a waiting synchronous call even with a slot about to free", async () => {
    const pool = new Pool(1, 4);
    const holder = await request(pool, "normal").settled();
    const sync = request(pool, "normal");
    await tick();
    holder.release();
    // The slot went to the waiting call; a task arriving now waits behind it.
    const task = request(pool, "low");
    await tick();
    expect([sync.granted, task.granted]).toEqual([true, false]);
  });

  test("an aborted waiting call leaves the queue; the task behind it gets the slot next", async () => {
    const pool = new Pool(1, 4);
    const holder = await request(pool, "normal").settled();
    const controller = new AbortController();
    const sync = request(pool, "normal", controller.signal);
    const task = request(pool, "low");
    controller.abort(new Error("client left"));
    await sync.settled();
    expect(sync.refused).toBeInstanceOf(Error);
    expect(pool.stats()).toEqual({ total: 1, busy: 1, queued: 1 });
    holder.release();
    await tick();
    expect(task.granted).toBe(true);
  });
});
