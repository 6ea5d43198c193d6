/**
 * Worker slots and a bounded queue. A job holds a slot while it fetches and processes its source; when
 * every slot is busy it waits in the queue, and when the queue is full it is refused at once with
 * SERVICE_UNAVAILABLE rather than waiting without bound.
 */
import { EngineError } from "./protocol.ts";

interface Waiter {
  grant: (release: () => void) => void;
}

export class Pool {
  readonly total: number;
  readonly maxQueue: number;
  private busy = 0;
  private readonly waiting: Waiter[] = [];

  constructor(total: number, maxQueue: number) {
    this.total = total;
    this.maxQueue = maxQueue;
  }

  stats(): { total: number; busy: number; queued: number } {
    return { total: this.total, busy: this.busy, queued: this.waiting.length };
  }

  /**
   * Resolves with a release function once a slot is free; rejects when saturated or aborted. A `low` priority
   * job (a task, which can wait in the Worker instead) may only wait while the queue is less than half full,
   * so the other half stays for synchronous calls, whose clients are waiting.
   */
  acquire(signal: AbortSignal, options: { priority?: "low" | "normal" } = {}): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.busy < this.total) {
      this.busy++;
      return Promise.resolve(this.releaser());
    }
    const room = options.priority === "low" ? Math.floor(this.maxQueue / 2) : this.maxQueue;
    if (this.waiting.length >= room) {
      return Promise.reject(
        new EngineError("SERVICE_UNAVAILABLE", "the media engine is at capacity; retry shortly"),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: (release) => {
          signal.removeEventListener("abort", onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next === undefined) this.busy--;
      else next.grant(this.releaser());
    };
  }
}
