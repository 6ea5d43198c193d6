/**
 * The engine's part in capacity: every answer reports its load (X-Engine-Load), and a job sent with
 * X-Engine-Priority: low (a task, which can wait in the Worker instead) may wait only in the first half of
 * the queue, so the other half stays for synchronous calls, and leaves the reserved slots to them
 * (ENGINE_RESERVED_SLOTS; the pool's ordering step by step: pool.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { AUTH, fixtureUrl, jobId, media, startTestEngine, type TestEngine } from "./support/engine.ts";

let engine: TestEngine;
beforeAll(async () => {
  engine = await startTestEngine({ slots: 1, queue: 2, warmProbes: 0 });
});
afterAll(() => engine.close());

const low = { ...AUTH, "content-type": "application/json", "x-engine-priority": "low" };

describe("X-Engine-Priority: low", () => {
  test("waits in the first half of the queue only; past it refused at once, where a normal job waits", async () => {
    const holder = new AbortController();
    const held = engine
      .job("video.probe", { source_url: fixtureUrl("/hang") }, { signal: holder.signal })
      .catch(() => null);
    while (engine.engine.pool.stats().busy === 0) await new Promise((r) => setTimeout(r, 20));

    // The first half of the queue (1 of 2) takes a low-priority job.
    const lowQueued = engine.job("video.probe", { source_url: media("av.mp4") }, { headers: low });
    while (engine.engine.pool.stats().queued === 0) await new Promise((r) => setTimeout(r, 20));
    const refused = await engine.job("video.probe", { source_url: media("av.mp4") }, { headers: low });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { code: string }).code).toBe("SERVICE_UNAVAILABLE");
    expect(refused.headers.get("x-engine-load")).toBe("busy=1;slots=1;queued=1");

    const queued = engine.job("video.probe", { job_id: jobId(), source_url: media("av.mp4") });
    while (engine.engine.pool.stats().queued < 2) await new Promise((r) => setTimeout(r, 20));
    holder.abort();
    await held;
    expect((await lowQueued).status).toBe(200);
    expect((await queued).status).toBe(200);
  });

  test("with a free slot it runs like any job", async () => {
    await engine.engine.idle();
    const res = await engine.job("video.probe", { source_url: media("av.mp4") }, { headers: low });
    expect(res.status).toBe(200);
  });
});

describe("ENGINE_RESERVED_SLOTS (2 slots, 1 reserved) while synchronous calls come", () => {
  test("a synchronous call runs at once beside a task while a second task waits for the task's slot", async () => {
    // The held task's /hang source must outlast a loaded machine's probe: no read timeout within the test.
    const reserved = await startTestEngine({
      slots: 2,
      queue: 4,
      reservedSlots: 1,
      warmProbes: 0,
      connectTimeoutMs: 600_000,
      readTimeoutMs: 600_000,
    });
    try {
      // Synchronous calls come (the reserve holds for ENGINE_RESERVE_HOLD_MS after each, 30 s by default).
      expect((await reserved.job("video.probe", { source_url: media("av.mp4") })).status).toBe(200);
      const holder = new AbortController();
      const task = reserved
        .job("video.probe", { source_url: fixtureUrl("/hang") }, { headers: low, signal: holder.signal })
        .catch(() => null);
      while (reserved.engine.pool.stats().busy === 0) await new Promise((r) => setTimeout(r, 20));

      // One slot is free, but it is the reserved one: the second task queues.
      const second = reserved.job("video.probe", { source_url: media("av.mp4") }, { headers: low });
      while (reserved.engine.pool.stats().queued === 0) await new Promise((r) => setTimeout(r, 20));
      const sync = await reserved.job("video.probe", { source_url: media("av.mp4") });
      expect(sync.status).toBe(200);
      expect(reserved.engine.pool.stats()).toEqual({ total: 2, busy: 1, queued: 1 });

      holder.abort();
      await task;
      expect((await second).status).toBe(200);
    } finally {
      await reserved.close();
    }
  });
});
