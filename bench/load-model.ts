/**
 * npm run bench:load-model — bench:load's mix replayed against the engine's real slot pool
 * (containers/ffmpeg/src/pool.ts) on a virtual clock, for each slot policy. No ffmpeg, no Worker: job
 * durations are fixed inputs (below), so the figures isolate what the policy does, independent of how busy
 * the machine is (bench:load itself needs a quiet machine). Deterministic: a seeded random generator.
 *
 * Per policy it prints the well-behaved synchronous probes refused and their p50/p99 latency (engine wait +
 * engine time + the Worker's share) against the idle run's, tasks ended during the load and after it, and the
 * longest a task waited.
 */
import { Pool } from "../containers/ffmpeg/src/pool.ts";
import { sized } from "./lib/smoke.ts";

const LOAD_S = Number(process.env.BENCH_LOAD_SECONDS ?? sized(120, 5));
/** Engine time of each job (s), and the Worker's part of a synchronous probe (auth, D1, answer). */
const DURATION = { probe: 0.06, cover: 0.15, trim: 0.6, drip: 10 } as const;
const WORKER_PART_S = 0.13;
const SLOTS = 2;
const QUEUE = 4;

/** The engine's pool before issue 13's reserve: FIFO, low priority limited to half the queue. */
class FifoPool {
  private busy = 0;
  private readonly waiting: ((release: () => void) => void)[] = [];
  acquire(_signal: AbortSignal, options: { priority?: "low" | "normal" } = {}): Promise<() => void> {
    if (this.busy < SLOTS) {
      this.busy++;
      return Promise.resolve(this.releaser());
    }
    const room = options.priority === "low" ? Math.floor(QUEUE / 2) : QUEUE;
    if (this.waiting.length >= room) return Promise.reject(new Error("SERVICE_UNAVAILABLE"));
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next === undefined) this.busy--;
      else next(this.releaser());
    };
  }
}

type SlotPool = Pick<Pool, "acquire">;

function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Events on a virtual clock; after each, the pool's promise callbacks run before the next. */
class Clock {
  now = 0;
  private events: { at: number; seq: number; run: () => void }[] = [];
  private seq = 0;
  at(at: number, run: () => void) {
    this.events.push({ at, seq: this.seq++, run });
  }
  async runUntil(end: number) {
    for (;;) {
      this.events.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.events[0];
      if (next === undefined || next.at > end) return;
      this.events.shift();
      this.now = next.at;
      next.run();
      await new Promise((r) => setImmediate(r));
    }
  }
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

async function run(make: (clock: Clock) => SlotPool, withLoad: boolean, withHostile = true, withSync = true) {
  const clock = new Clock();
  const pool = make(clock);
  const rand = random(13);
  // A stream of its own, so that the policies without a lane draw the same durations as before it.
  const pick = random(31);
  const never = new AbortController().signal;
  /** A job: waits for a slot, holds it for `seconds`; resolves with the wait, or null when refused. */
  const job = (
    priority: "low" | "normal",
    seconds: number,
    onEnd: (wait: number | null) => void,
    light = false,
  ) => {
    const asked = clock.now;
    pool.acquire(never, { priority, light }).then(
      (release) => {
        const wait = clock.now - asked;
        clock.at(clock.now + seconds * (0.8 + 0.4 * rand()), () => {
          release();
          onEnd(wait);
        });
      },
      () => onEnd(null),
    );
  };
  const end = withLoad ? LOAD_S : 30;
  const probes: { ms: number | null }[] = [];
  // 10 synchronous accounts, one call each every 2.5 s, alternating probe and (in-Worker) image watermark.
  for (let a = 0; a < (withSync ? 10 : 0); a++) {
    const call = (i: number) => {
      const started = clock.now;
      const next = () => clock.at(Math.max(clock.now, started + 2.5), () => call(i + 1));
      if (clock.now >= end) return;
      if ((i + a) % 2 !== 0) return next();
      job(
        "normal",
        DURATION.probe,
        (wait) => {
          probes.push({ ms: wait === null ? null : (wait + DURATION.probe + WORKER_PART_S) * 1000 });
          next();
        },
        true,
      );
    };
    clock.at(a * 0.25, () => call(0));
  }
  const tasks = { created: 0, endedInLoad: 0, ended: 0, longestWait: 0, lastEnd: 0 };
  if (withLoad) {
    // Tasks at 5/s: probe, cover, image watermark (in the Worker: no engine slot) and trim, in turn. A task
    // refused by the engine waits in its runner from 2 s doubling to 30 s, jittered (src/tasks/runner.ts).
    const kinds = [DURATION.probe, DURATION.cover, null, DURATION.trim];
    for (let i = 0; i < LOAD_S * 5; i++) {
      const seconds = kinds[i % 4];
      clock.at(i / 5, () => {
        tasks.created++;
        const created = clock.now;
        const done = () => {
          tasks.ended++;
          if (clock.now <= LOAD_S) tasks.endedInLoad++;
          tasks.longestWait = Math.max(tasks.longestWait, clock.now - created);
          tasks.lastEnd = Math.max(tasks.lastEnd, clock.now);
        };
        if (seconds === null || seconds === undefined) return done();
        const attempt = (waits: number) =>
          job("low", seconds, (wait) => {
            if (wait !== null) return done();
            const step = Math.min(30, 2 * 2 ** Math.min(waits, 5));
            clock.at(clock.now + step * (0.75 + 0.5 * rand()), () => attempt(waits + 1));
          });
        attempt(0);
      });
    }
    // The hostile account: its share is one job; 6 of its 8 loops send drip-fed sources (held 10 s, until the
    // rate floor), 2 send 16.8 MP image watermarks (in the Worker, ~2 s, no engine slot); a refused loop
    // tries again 250 ms later, so its share is taken again at once.
    const hostile = () => {
      if (clock.now >= LOAD_S) return;
      if (rand() < 2 / 8) return clock.at(clock.now + 2, hostile);
      // Half of its drip-fed calls are video.probe (light: the lane, when there is one), half extract-audio.
      job(
        "normal",
        DURATION.drip,
        (wait) => clock.at(clock.now + (wait === null ? 0.25 : 0.05), hostile),
        pick() < 0.5,
      );
    };
    if (withHostile) clock.at(0, hostile);
  }
  await clock.runUntil(end + 600);
  return { probes, tasks };
}

/** The pool's clock and timers on the virtual clock. */
const onClock = (clock: Clock) => ({
  now: () => clock.now * 1000,
  setTimer: (run: () => void, ms: number) => clock.at(clock.now + ms / 1000, run),
});

// The light lane takes synchronous probes only (the engine marks video.probe without X-Engine-Priority: low);
// the policies without it ignore the mark (no lane: a light job is an ordinary one).
const policies: [string, (clock: Clock) => SlotPool][] = [
  ["FIFO, tasks in half the queue (before)", () => new FifoPool()],
  ["sync first in the queue, no reserve", (clock) => new Pool(SLOTS, QUEUE, onClock(clock))],
  [
    "reserve 1 held 30 s after a synchronous call, no lane (before)",
    (clock) => new Pool(SLOTS, QUEUE, { reserved: 1, ...onClock(clock) }),
  ],
  [
    "reserve 1, always held (ENGINE_RESERVE_HOLD_MS=3600000)",
    (clock) => new Pool(SLOTS, QUEUE, { reserved: 1, reserveHoldMs: 3_600_000, ...onClock(clock) }),
  ],
  [
    "reserve 1 + light lane 2 (ENGINE_LIGHT_SLOTS, the default)",
    (clock) => new Pool(SLOTS, QUEUE, { reserved: 1, lightSlots: 2, ...onClock(clock) }),
  ],
  ["no reserve + light lane 2", (clock) => new Pool(SLOTS, QUEUE, { lightSlots: 2, ...onClock(clock) })],
  [
    "reserve 1 + ENGINE_TASK_MIN_SLOTS=1",
    (clock) => new Pool(SLOTS, QUEUE, { reserved: 1, lowFloor: 1, ...onClock(clock) }),
  ],
];

console.log(
  `model: ${SLOTS} slots, queue ${QUEUE}, ${LOAD_S} s load; engine time (s) ${JSON.stringify(DURATION)} ±20 %, Worker part of a probe ${WORKER_PART_S} s`,
);
const scenarios = [
  ["the bench's mix", true, true],
  ["without the hostile account", false, true],
  ["tasks alone (no synchronous calls, no hostile)", false, false],
] as const;
for (const [scenario, withHostile, withSync] of scenarios) {
  console.log(`\n${scenario}:`);
  for (const [name, make] of policies) {
    const idle = await run(make, false);
    const load = await run(make, true, withHostile, withSync);
    const ok = (r: typeof idle) => r.probes.flatMap((p) => (p.ms === null ? [] : [p.ms]));
    const refused = load.probes.filter((p) => p.ms === null).length;
    const p99 = percentile(ok(load), 99) / percentile(ok(idle), 99);
    const sync = withSync
      ? `probes refused ${refused} of ${load.probes.length}; probe p50 ${percentile(ok(load), 50).toFixed(0)} ms, ` +
        `p99 ${percentile(ok(load), 99).toFixed(0)} ms = ${p99.toFixed(2)}× idle; `
      : "";
    console.log(
      `  ${name}: ${sync}tasks ${load.tasks.created} created, ${load.tasks.endedInLoad} ended during the load, ` +
        `${load.tasks.ended} in all (the last ${Math.max(0, load.tasks.lastEnd - LOAD_S).toFixed(0)} s after the load), ` +
        `longest ${load.tasks.longestWait.toFixed(0)} s`,
    );
  }
}
process.exit(0);
