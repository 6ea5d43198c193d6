/**
 * Worker slots and a bounded queue. A job holds a slot while it fetches and processes its source; when
 * every slot is busy it waits in the queue, and when the queue is full it is refused at once with
 * SERVICE_UNAVAILABLE rather than waiting without bound.
 *
 * Two priorities. `normal` jobs are synchronous calls, whose clients wait for the answer; `low` jobs are tasks,
 * which can wait in the Worker instead (their runner retries a 503 with backoff). So that a synchronous call
 * never waits behind tasks:
 * - `reserved` slots are kept for normal jobs: a low job takes a slot only while more than `reserved` are free;
 * - a waiting normal job gets the next free slot before any waiting low job;
 * - a low job may wait only while the queue is less than half full, the other half stays for normal jobs.
 */
import { EngineError } from "./protocol.ts";

export type Priority = "low" | "normal";

interface Waiter {
  priority: Priority;
  grant: (release: () => void) => void;
}

export class Pool {
  readonly total: number;
  readonly maxQueue: number;
  /** Slots a low-priority job must leave free (always fewer than `total`, so tasks can run on an idle engine). */
  readonly reserved: number;
  private busy = 0;
  /** Normal waiters in arrival order, then low ones in arrival order: the order slots are granted in. */
  private readonly waiting: Waiter[] = [];

  constructor(total: number, maxQueue: number, reserved = 0) {
    this.total = total;
    this.maxQueue = maxQueue;
    this.reserved = Math.max(0, Math.min(reserved, total - 1));
  }

  stats(): { total: number; busy: number; queued: number } {
    return { total: this.total, busy: this.busy, queued: this.waiting.length };
  }

  /** Whether a job of `priority` may take a slot now. */
  private mayStart(priority: Priority): boolean {
    const free = this.total - this.busy;
    return priority === "low" ? free > this.reserved : free > 0;
  }

  /**
   * Resolves with a release function once a slot is free for `priority`; rejects when saturated or aborted.
   */
  acquire(signal: AbortSignal, options: { priority?: Priority } = {}): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const priority = options.priority ?? "normal";
    // A low job never overtakes a waiting one; a normal job only waits behind other normal ones.
    const ahead = priority === "low" ? this.waiting.length : this.waiting.filter(isNormal).length;
    if (ahead === 0 && this.mayStart(priority)) {
      this.busy++;
      return Promise.resolve(this.releaser());
    }
    const room = priority === "low" ? Math.floor(this.maxQueue / 2) : this.maxQueue;
    if (this.waiting.length >= room) {
      return Promise.reject(
        new EngineError("SERVICE_UNAVAILABLE", "the media engine is at capacity; retry shortly"),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        priority,
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
    });
  }

  /** Grants free slots to waiters in order, as long as the next one may start. */
  private dispatch(): void {
    for (let next = this.waiting[0]; next !== undefined; next = this.waiting[0]) {
      if (!this.mayStart(next.priority)) return;
      this.waiting.shift();
      this.busy++;
      next.grant(this.releaser());
    }
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.busy--;
      this.dispatch();
    };
  }
}

const isNormal = (w: Waiter) => w.priority === "normal";
const isLow = (w: Waiter) => w.priority === "low";
