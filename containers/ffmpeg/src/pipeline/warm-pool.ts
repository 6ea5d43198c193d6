/**
 * Processes started ahead of the jobs that will take them (warm-probe.ts, warm-ffmpeg.ts): at most `max`
 * wait, one per key, the least recently wanted making room. A process that exits while waiting is dropped
 * and started again unless it lived under 5 s (so one that cannot start does not loop); one that exited a
 * moment before a job wanted it is not handed out. Nothing starts after `close`.
 */
import type { ChildProcess } from "node:child_process";

/** A waiting process as the pool sees it. */
export interface Warm {
  child: ChildProcess;
  /** Settles when the process has exited (whatever the outcome). */
  exited: Promise<void>;
  /** Stops it and frees what it holds (its relay URL, its directory); called once, never after `take`. */
  dismiss(): void;
}

interface Entry<W> {
  warm: W;
  start: () => W | null;
  startedAt: number;
}

export class WarmPool<W extends Warm> {
  /** Waiting processes by key, least recently wanted first. */
  private readonly waiting = new Map<string, Entry<W>>();
  private closed = false;
  readonly max: number;
  private readonly minLifetimeMs: number;

  /** `minLifetimeMs`: a process that exits while waiting is started again only if it lived this long. */
  constructor(max: number, minLifetimeMs = 5000) {
    this.max = max;
    this.minLifetimeMs = minLifetimeMs;
  }

  /** The process waiting for `key`, now the caller's; undefined when none waits or it has just exited. */
  take(key: string): W | undefined {
    const entry = this.waiting.get(key);
    if (entry === undefined) return undefined;
    const { child } = entry.warm;
    if (child.exitCode !== null || child.signalCode !== null) {
      this.dismiss(key, entry); // it ended on its own a moment ago; the job's refill starts another
      return undefined;
    }
    this.waiting.delete(key);
    return entry.warm;
  }

  /** Starts a process for `key` with `start` unless one waits already (making room when `max` wait). */
  refill(key: string, start: () => W | null): void {
    if (this.closed || this.max === 0) return;
    const current = this.waiting.get(key);
    if (current !== undefined) {
      // Most recently wanted: to the end of the eviction order.
      this.waiting.delete(key);
      this.waiting.set(key, current);
      return;
    }
    while (this.waiting.size >= this.max) {
      const [oldest] = this.waiting;
      if (oldest === undefined) break;
      this.dismiss(...oldest);
    }
    const warm = start();
    if (warm === null) return;
    const entry: Entry<W> = { warm, start, startedAt: performance.now() };
    this.waiting.set(key, entry);
    void warm.exited.then(() => {
      if (this.waiting.get(key) !== entry) return; // taken or dismissed
      this.dismiss(key, entry);
      if (performance.now() - entry.startedAt >= this.minLifetimeMs) this.refill(key, start);
    });
  }

  /** The keys with a waiting process, least recently wanted first. */
  keys(): string[] {
    return [...this.waiting.keys()];
  }

  /** The waiting processes, least recently wanted first. */
  values(): W[] {
    return [...this.waiting.values()].map((e) => e.warm);
  }

  /** Process ids of the processes waiting now (not yet any job's). */
  pids(): number[] {
    return this.values().flatMap((w) => (w.child.pid === undefined ? [] : [w.child.pid]));
  }

  /** Stops every waiting process; nothing starts afterwards. */
  close(): void {
    this.closed = true;
    for (const [key, entry] of [...this.waiting]) this.dismiss(key, entry);
  }

  private dismiss(key: string, entry: Entry<W>): void {
    if (this.waiting.get(key) === entry) this.waiting.delete(key);
    entry.warm.dismiss();
  }
}
