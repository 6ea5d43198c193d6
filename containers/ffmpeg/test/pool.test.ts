/**
 * The pool's priorities (pool.ts), driven step by step without ffmpeg: slots reserved for synchronous calls,
 * synchronous calls first in the queue, tasks still progressing when no synchronous call comes, and the light
 * lane where synchronous probes run beside encodes.
 */
import { describe, expect, test } from "vitest";
import { Pool } from "../src/pool.ts";

const never = new AbortController().signal;

/** A job's acquisition, observable without awaiting it. */
function request(pool: Pool, priority: "low" | "normal", signal = never, light = false) {
  const job = { granted: false, refused: undefined as unknown, release: () => {} };
  const done = pool.acquire(signal, { priority, light }).then(
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

describe("the light lane (slots apart from the general ones, for synchronous probes)", () => {
  const probe = (pool: Pool, signal = never) => request(pool, "normal", signal, true);

  test("a probe runs at once while tasks and a synchronous encode hold every general slot", async () => {
    const pool = new Pool(2, 4, { reserved: 1, lightSlots: 2, ...clock() });
    const task = await request(pool, "low").settled();
    const encode = await request(pool, "normal").settled();
    expect([task.granted, encode.granted]).toEqual([true, true]);
    const waitingTask = request(pool, "low");

    const probes = [probe(pool), probe(pool)];
    await tick();
    expect(probes.map((p) => p.granted)).toEqual([true, true]);
    // The lane is apart from the general slots: they and their queue are as before.
    expect(pool.stats()).toEqual({ total: 2, busy: 2, queued: 1 });
    expect(pool.lightStats()).toEqual({ total: 2, busy: 2 });
    expect(waitingTask.granted).toBe(false);
  });

  test("a probe taking the lane does not hold the reserve against tasks", async () => {
    const pool = new Pool(2, 4, { reserved: 1, lightSlots: 1, ...clock() });
    (await probe(pool).settled()).release();
    const tasks = [request(pool, "low"), request(pool, "low")];
    await tick();
    expect(tasks.map((t) => t.granted)).toEqual([true, true]);
  });

  test("with the lane full a probe takes a free general slot like a synchronous call", async () => {
    const pool = new Pool(2, 4, { reserved: 1, lightSlots: 1, ...clock() });
    const first = await probe(pool).settled();
    const second = await probe(pool).settled();
    expect([first.granted, second.granted]).toEqual([true, true]);
    expect(pool.stats()).toEqual({ total: 2, busy: 1, queued: 0 });
    expect(pool.lightStats()).toEqual({ total: 1, busy: 1 });
  });

  test("a probe waiting with lane and slots full takes the first slot that frees, lane or general", async () => {
    const pool = new Pool(1, 4, { lightSlots: 1, ...clock() });
    const encode = await request(pool, "low").settled();
    const inLane = await probe(pool).settled();
    const waiting = [probe(pool), probe(pool)];
    const task = request(pool, "low");
    await tick();
    expect(waiting.map((w) => w.granted)).toEqual([false, false]);

    // The lane frees first: the first waiting probe takes it, the task still waits for the encode's slot.
    inLane.release();
    await tick();
    expect(waiting.map((w) => w.granted)).toEqual([true, false]);
    expect(pool.lightStats()).toEqual({ total: 1, busy: 1 });
    expect(task.granted).toBe(false);

    // The general slot frees: the second probe (a synchronous call) goes before the task.
    encode.release();
    await tick();
    expect(waiting.map((w) => w.granted)).toEqual([true, true]);
    expect(task.granted).toBe(false);
    expect(pool.stats()).toEqual({ total: 1, busy: 1, queued: 1 });
  });

  test("waiting probes have their own room: a full general queue does not refuse them", async () => {
    const pool = new Pool(1, 2, { lightSlots: 1, ...clock() });
    await request(pool, "normal").settled();
    await probe(pool).settled();
    const general = [request(pool, "normal"), request(pool, "normal")];
    const refused = await request(pool, "normal").settled();
    expect(refused.refused).toMatchObject({ code: "SERVICE_UNAVAILABLE" });

    const probes = [probe(pool), probe(pool)];
    await tick();
    expect(probes.map((p) => p.refused)).toEqual([undefined, undefined]);
    // Their room is bounded too (maxQueue light waiters).
    const third = await probe(pool).settled();
    expect(third.refused).toMatchObject({ code: "SERVICE_UNAVAILABLE" });
    expect(general.map((g) => g.refused)).toEqual([undefined, undefined]);
  });

  test("an aborted waiting probe leaves the queue and never takes a lane slot", async () => {
    const pool = new Pool(1, 4, { lightSlots: 1, ...clock() });
    await request(pool, "normal").settled();
    const inLane = await probe(pool).settled();
    const abort = new AbortController();
    const leaving = probe(pool, abort.signal);
    const staying = probe(pool);
    await tick();
    abort.abort(new Error("client left"));
    await leaving.settled();
    expect(leaving.refused).toBeInstanceOf(Error);

    inLane.release();
    await tick();
    expect(staying.granted).toBe(true);
    expect(pool.lightStats()).toEqual({ total: 1, busy: 1 });
    expect(pool.stats().queued).toBe(0);
  });

  test("no lane (lightSlots 0, the default): a light job is an ordinary job of its priority", async () => {
    const pool = new Pool(1, 2, clock());
    await request(pool, "low").settled();
    const waiting = probe(pool);
    await tick();
    expect(waiting.granted).toBe(false);
    expect(pool.lightStats()).toEqual({ total: 0, busy: 0 });
  });
});
