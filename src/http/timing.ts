import type { Context } from "hono";
import { setMetric, timing } from "hono/timing";

/**
 * Phases of one piece of work (auth, engine, fetch, process, store), recorded by code that knows nothing of
 * Hono (the operations, the task runner). The Server-Timing header itself is hono/timing's (below).
 */
export class Timing {
  private readonly recorded = new Map<string, number>();

  async measure<T>(phase: string, work: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await work();
    } finally {
      this.add(phase, performance.now() - start);
    }
  }

  add(phase: string, ms: number) {
    this.recorded.set(phase, (this.recorded.get(phase) ?? 0) + ms);
  }

  phases(): [string, number][] {
    return [...this.recorded];
  }
}

/**
 * X-Debug-Timing → Server-Timing on a synchronous operation that succeeded: hono/timing's middleware writes the
 * header (and `total`, from where it runs: before authentication) from the metrics `reportPhases` set.
 */
export const debugServerTiming = timing({
  enabled: (c) => Boolean(c.req.header("x-debug-timing")) && c.res.status === 200,
  totalDescription: "",
});

/** The recorded phases as hono/timing metrics (the handler calls this when the request asked for them). */
export function reportPhases(c: Context, recorded: Timing) {
  for (const [phase, ms] of recorded.phases()) setMetric(c, phase, ms);
}
