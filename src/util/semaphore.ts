/** How often a waiter looks for a free slot. */
const POLL_MS = 5;
/**
 * A waiter that has not looked for this long is taken to be gone (its request ended while it waited) and loses
 * its place. Longer than any synchronous step of the work this guards (an in-Worker image codec call: well
 * under a second), which delays every timer alike.
 */
const STALE_MS = 5_000;

/**
 * A counting semaphore for work shared by the requests of one isolate: at most `slots` holders at once; the
 * rest wait in order, "low" priority (a task's work) behind every "normal" waiter (a client waiting on a
 * synchronous call), like the engine's priorities.
 *
 * Waiters are not woken by the holder that leaves: each waits on its own timer and takes a free slot when it
 * is first in line. workerd may not continue a promise created by one request and resolved from another's
 * context ("Cannot perform I/O on behalf of a different request", I/O type RefcountedFulfiller): in the test
 * runtime a hand-off between requests left the waiter hanging (test/util/semaphore.test.ts, the overlapping
 * requests). Waking oneself keeps every continuation in its own request.
 */
export class Semaphore {
  private free: number;
  private nextTicket = 0;
  private readonly waiting = new Map<number, { rank: number; seen: number }>();

  constructor(slots: number) {
    this.free = slots;
  }

  async run<T>(work: () => Promise<T>, priority: "normal" | "low" = "normal"): Promise<T> {
    if (this.free > 0 && this.waiting.size === 0) this.free--;
    else await this.wait(priority === "normal" ? 0 : 1);
    try {
      return await work();
    } finally {
      this.free++;
    }
  }

  private async wait(rank: number) {
    const ticket = this.nextTicket++;
    this.waiting.set(ticket, { rank, seen: Date.now() });
    try {
      while (!this.isFirst(ticket)) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        // Renewed; had it been taken for gone while the thread was busy, it is at the back of the line again.
        this.waiting.set(ticket, { rank, seen: Date.now() });
      }
    } finally {
      this.waiting.delete(ticket);
    }
    this.free--;
  }

  /** A slot is free and `ticket` is the first live waiter by (rank, arrival). */
  private isFirst(ticket: number): boolean {
    if (this.free <= 0) return false;
    const now = Date.now();
    let first: number | undefined;
    let firstRank = Number.POSITIVE_INFINITY;
    for (const [other, { rank, seen }] of this.waiting) {
      if (other !== ticket && now - seen > STALE_MS) {
        this.waiting.delete(other);
        continue;
      }
      // Tickets are in arrival order in the Map: the first of the lowest rank wins.
      if (rank < firstRank) {
        first = other;
        firstRank = rank;
      }
    }
    return first === ticket;
  }
}
