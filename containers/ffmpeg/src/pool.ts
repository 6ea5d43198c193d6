/**
 * Worker slots and a bounded queue. A job holds a slot while it fetches and processes its source; when
 * every slot is busy it waits in the queue, and when the queue is full it is refused at once with
 * SERVICE_UNAVAILABLE rather than waiting without bound.
 *
 * Two priorities. `normal` jobs are synchronous calls, whose clients wait for the answer; `low` jobs are tasks,
 * which can wait in the Worker instead (their runner retries a 503 with backoff). So that a synchronous call
 * never waits behind tasks:
 * - `reserved` slots are kept for normal jobs: a low job takes a slot only while more than `reserved` are free
 *   (or while fewer than `lowFloor` low jobs run, if set). The reserve holds while synchronous calls come: from
 *   a normal job's arrival until `reserveHoldMs` after the last one; on an engine that only runs tasks they
 *   use every slot;
 * - a waiting normal job gets the next free slot before any waiting low job;
 * - a low job may wait only while the queue is less than half full, the other half stays for normal jobs.
 *
 * A light lane: `lightSlots` slots apart from `total`, for jobs the caller marks `light` (the engine marks
 * synchronous video.probe: one ffprobe on a bounded read, no decoding beyond a first frame). A light job takes a
 * free lane slot before anything else, so it never waits behind encodes holding the general slots; when the
 * lane is full it asks for a general slot like any job of its priority, and while it waits there it also takes
 * the first lane slot that frees. Light jobs waiting have their own room (`maxQueue`) beside the general queue,
 * so they are refused only when both their lane and that room are full; the lane's count bounds its processes
 * and memory.
 */
import { EngineError } from "./protocol.ts";

export type Priority = "low" | "normal";

export interface PoolOptions {
  /** Slots kept for normal jobs while they come (below `total`). */
  reserved?: number;
  /** Low jobs that may run whatever the reserve (0: the reserve is strict). */
  lowFloor?: number;
  /** How long after a normal job's arrival the reserve still holds (ms). */
  reserveHoldMs?: number;
  /** Slots of the light lane, apart from `total` (0: no lane). */
  lightSlots?: number;
  /** Clock in ms, and a timer on it (tests and bench/load-model.ts drive both). */
  now?: () => number;
  setTimer?: (run: () => void, ms: number) => void;
}

const realTimer = (run: () => void, ms: number) => {
  setTimeout(run, ms).unref();
};

interface Waiter {
  priority: Priority;
  light: boolean;
  grant: (release: () => void) => void;
}

export class Pool {
  readonly total: number;
  readonly maxQueue: number;
  /** Slots a low-priority job must leave free (always fewer than `total`, so tasks can run on an idle engine). */
  readonly reserved: number;
  /**
   * Low-priority jobs that may run even when only reserved slots are free, so that synchronous calls holding
   * the other slots (a drip-fed source, up to its account's share) cannot keep every task out; 0: none, the
   * reserve is strict.
   */
  readonly lowFloor: number;
  readonly reserveHoldMs: number;
  /** Slots of the light lane (not counted in `total`). */
  readonly lightSlots: number;
  private readonly now: () => number;
  /** When the last normal job asked for a slot (−∞: never). */
  private lastNormal = Number.NEGATIVE_INFINITY;
  private readonly setTimer: (run: () => void, ms: number) => void;
  private lapsePending = false;
  private busy = 0;
  private busyLow = 0;
  private busyLight = 0;
  /** Normal waiters in arrival order, then low ones in arrival order: the order slots are granted in. */
  private readonly waiting: Waiter[] = [];

  constructor(total: number, maxQueue: number, options: PoolOptions = {}) {
    this.total = total;
    this.maxQueue = maxQueue;
    this.reserved = Math.max(0, Math.min(options.reserved ?? 0, total - 1));
    this.lowFloor = Math.max(0, options.lowFloor ?? 0);
    this.reserveHoldMs = options.reserveHoldMs ?? 30_000;
    this.lightSlots = Math.max(0, options.lightSlots ?? 0);
    this.now = options.now ?? (() => performance.now());
    this.setTimer = options.setTimer ?? realTimer;
  }

  /** Slots a low job must leave free now: the reserve while normal jobs come or hold slots, else none. */
  private reserveNow(): number {
    const recent = this.now() - this.lastNormal < this.reserveHoldMs;
    return recent || this.busy > this.busyLow || this.waiting.some(isNormal) ? this.reserved : 0;
  }

  stats(): { total: number; busy: number; queued: number } {
    return { total: this.total, busy: this.busy, queued: this.waiting.length };
  }

  /** The light lane's slots and how many run now. */
  lightStats(): { total: number; busy: number } {
    return { total: this.lightSlots, busy: this.busyLight };
  }

  /** Whether a job of `priority` may take a slot now. */
  private mayStart(priority: Priority): boolean {
    const free = this.total - this.busy;
    if (priority === "normal") return free > 0;
    return free > this.reserveNow() || (free > 0 && this.busyLow < this.lowFloor);
  }

  /**
   * Resolves with a release function once a slot is free for `priority`; rejects when saturated or aborted.
   */
  acquire(signal: AbortSignal, options: { priority?: Priority; light?: boolean } = {}): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    // Waiters whose turn came with time (the reserve lapsed) go first.
    this.dispatch();
    const priority = options.priority ?? "normal";
    const light = options.light === true && this.lightSlots > 0;
    if (light && this.busyLight < this.lightSlots) return Promise.resolve(this.takeLight());
    if (priority === "normal") this.lastNormal = this.now();
    // A low job never overtakes a waiting one; a normal job only waits behind other normal ones.
    const ahead = priority === "low" ? this.waiting.length : this.waiting.filter(isNormal).length;
    if (ahead === 0 && this.mayStart(priority)) return Promise.resolve(this.take(priority));
    // Light jobs waiting for the lane have a queue of the same size beside the general one.
    const room = priority === "low" && !light ? Math.floor(this.maxQueue / 2) : this.maxQueue;
    const queued = this.waiting.filter((w) => w.light === light).length;
    if (queued >= room) {
      return Promise.reject(
        new EngineError("SERVICE_UNAVAILABLE", "the media engine is at capacity; retry shortly"),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        priority,
        light,
        grant: (release) => {
          signal.removeEventListener("abort", onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal.reason);
        // A normal job that leaves may unblock low ones behind it (their turn no longer waits on it).
        this.dispatch();
      };
      signal.addEventListener("abort", onAbort, { once: true });
      const firstLow = this.waiting.findIndex(isLow);
      if (priority === "low" || firstLow < 0) this.waiting.push(waiter);
      else this.waiting.splice(firstLow, 0, waiter);
      if (priority === "low") this.dispatchWhenReserveLapses();
    });
  }

  /** Grants free slots to waiters in order, as long as the next one may start. */
  private dispatch(): void {
    for (let next = this.waiting[0]; next !== undefined; next = this.waiting[0]) {
      if (!this.mayStart(next.priority)) return;
      this.waiting.shift();
      next.grant(this.take(next.priority));
    }
  }

  /**
   * A low job waiting only for the reserve would otherwise wait for the next release (which a long job may
   * hold back for minutes) once synchronous calls stop coming: look again when the reserve lapses.
   */
  private dispatchWhenReserveLapses(): void {
    if (this.lapsePending || this.reserved === 0) return;
    const at = this.lastNormal + this.reserveHoldMs - this.now();
    if (!Number.isFinite(at) || at < 0) return;
    this.lapsePending = true;
    this.setTimer(() => {
      this.lapsePending = false;
      this.dispatch();
      if (this.waiting.some(isLow)) this.dispatchWhenReserveLapses();
    }, at + 1);
  }

  /** Takes a slot of the light lane; its release hands it to the first waiting light job. */
  private takeLight(): () => void {
    this.busyLight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.busyLight--;
      const i = this.waiting.findIndex((w) => w.light);
      if (i < 0) return;
      const [next] = this.waiting.splice(i, 1);
      next!.grant(this.takeLight());
      // The waiter left the queue: a job behind it may start now.
      this.dispatch();
    };
  }

  /** Takes a slot for `priority`; returns its release. */
  private take(priority: Priority): () => void {
    this.busy++;
    if (priority === "low") this.busyLow++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.busy--;
      if (priority === "low") this.busyLow--;
      this.dispatch();
    };
  }
}

const isNormal = (w: Waiter) => w.priority === "normal";
const isLow = (w: Waiter) => w.priority === "low";
