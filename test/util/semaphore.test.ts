import { describe, expect, it } from "vitest";
import { Semaphore } from "../../src/util/semaphore";
import { newAccount } from "../helpers/api";
import { media, operate } from "../helpers/media";

/** A job that holds its slot until `finish()`; `started` records the order in which jobs got a slot. */
function holder(semaphore: Semaphore, name: string, started: string[], priority?: "normal" | "low") {
  let finish = () => {};
  const held = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const done = semaphore.run(async () => {
    started.push(name);
    await held;
    return name;
  }, priority);
  return { finish: () => finish(), done };
}

async function until(condition: () => boolean) {
  const since = Date.now();
  while (!condition()) {
    if (Date.now() - since > 5_000) throw new Error("condition not reached in 5 s");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe("Semaphore", () => {
  it("runs at most `slots` holders at once, the others in the order they came", async () => {
    const semaphore = new Semaphore(2);
    const started: string[] = [];
    const jobs = ["a", "b", "c", "d"].map((name) => holder(semaphore, name, started));
    await until(() => started.length === 2);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(started).toEqual(["a", "b"]);
    jobs[1]!.finish();
    await until(() => started.length === 3);
    expect(started).toEqual(["a", "b", "c"]);
    for (const job of jobs) job.finish();
    expect(await Promise.all(jobs.map((job) => job.done))).toEqual(["a", "b", "c", "d"]);
    expect(started).toEqual(["a", "b", "c", "d"]);
  });

  it("normal-priority waiters (synchronous calls) go before low-priority ones (tasks) that came earlier", async () => {
    const semaphore = new Semaphore(1);
    const started: string[] = [];
    const jobs = new Map(
      (
        [
          ["task-1", "low"],
          ["task-2", "low"],
          ["task-3", "low"],
          ["sync-1", "normal"],
          ["sync-2", undefined],
        ] as const
      ).map(([name, priority]) => [name, holder(semaphore, name, started, priority)]),
    );
    // Each time, the job that got the slot finishes and the next one in line takes it.
    for (let i = 0; i < jobs.size; i++) {
      await until(() => started.length === i + 1);
      jobs.get(started[i] as "task-1")?.finish();
    }
    await Promise.all([...jobs.values()].map((job) => job.done));
    expect(started).toEqual(["task-1", "sync-1", "sync-2", "task-2", "task-3"]);
  });

  it("a holder that throws frees its slot", async () => {
    const semaphore = new Semaphore(1);
    await expect(semaphore.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await semaphore.run(async () => "next")).toBe("next");
  });

  /**
   * A waiter whose request ended while it waited: workerd drops that request's timers, so it never looks
   * again and its entry stays behind. Put in directly (a ticket no code will renew), as such a waiter leaves it.
   */
  function ghost(semaphore: Semaphore, seen: number) {
    const waiting = (semaphore as unknown as { waiting: Map<number, { rank: number; seen: number }> })
      .waiting;
    waiting.set(-1, { rank: 0, seen });
    return waiting;
  }

  it("a waiter that stopped looking keeps its place for 5 s, then loses it to the next one in line", async () => {
    const semaphore = new Semaphore(1);
    const started: string[] = [];
    const first = holder(semaphore, "first", started);
    await until(() => started.length === 1);
    const waiting = ghost(semaphore, Date.now());
    const next = holder(semaphore, "next", started);
    first.finish();
    await first.done;
    // The ghost is first in line and was seen just now: the slot stays free for it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(started).toEqual(["first"]);
    // Past 5 s without looking, it is taken for gone.
    waiting.set(-1, { rank: 0, seen: Date.now() - 5_001 });
    await until(() => started.length === 2);
    expect(started).toEqual(["first", "next"]);
    expect(waiting.has(-1)).toBe(false);
    next.finish();
    expect(await next.done).toBe("next");
  });

  it("a holder leaving with only a gone waiter left frees the slot for a newcomer", async () => {
    const semaphore = new Semaphore(1);
    ghost(semaphore, Date.now() - 5_001);
    expect(await semaphore.run(async () => "newcomer")).toBe("newcomer");
  });
});

describe("in-Worker image work shared by separate requests of one isolate", () => {
  it("four overlapping image watermarks, three times: every one answers 200", async () => {
    // Before waiters woke themselves, the second request hung (504 after the budget) and the isolate reported
    // "Cannot perform I/O on behalf of a different request (I/O type: RefcountedFulfiller)".
    const accounts = await Promise.all(Array.from({ length: 4 }, () => newAccount({ credits: 10 })));
    for (let round = 0; round < 3; round++) {
      const responses = await Promise.all(
        accounts.map(({ key }) =>
          operate("/v1/image/watermark", key, {
            source_url: media("photo.jpg"),
            params: { watermark_url: media("logo.png"), format: "webp" },
          }),
        ),
      );
      for (const response of responses) expect(response.status, await response.clone().text()).toBe(200);
    }
  });
});
