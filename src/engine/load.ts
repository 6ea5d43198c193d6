/**
 * What this isolate last heard of each engine instance's load (the X-Engine-Load header every engine answer
 * carries), and the order in which to try instances for a new job: most free first, unknown ones in
 * between, a refusing one last. A hint, not a lock: the fallback on 503 (http-engine.ts) makes it safe.
 */

/** Header on every engine answer: `busy=<jobs running>;slots=<slots>;queued=<jobs waiting>`. */
export const ENGINE_LOAD_HEADER = "x-engine-load";

export interface EngineLoad {
  busy: number;
  slots: number;
  queued: number;
}

/** An observation older than this says nothing any more. */
const FRESH_MS = 30_000;
/** Free capacity assumed for an instance not heard from (recently): between a free one and a full one. */
const UNKNOWN_FREE = 0.5;

export function parseEngineLoad(value: string | null): EngineLoad | null {
  const m = /^busy=(\d+);slots=(\d+);queued=(\d+)$/.exec(value ?? "");
  return m === null ? null : { busy: Number(m[1]), slots: Number(m[2]), queued: Number(m[3]) };
}

export class LoadBoard {
  private readonly seen = new Map<string, { free: number; at: number }>();

  /** Records an answer's load; an answer without the header (not the engine's own) records nothing. */
  observe(instance: string, headers: Headers): void {
    const load = parseEngineLoad(headers.get(ENGINE_LOAD_HEADER));
    if (load !== null)
      this.seen.set(instance, { free: load.slots - load.busy - load.queued, at: Date.now() });
  }

  /** The instance refused a job (503) or could not be reached: try it last for a while. */
  refused(instance: string): void {
    this.seen.set(instance, { free: -1, at: Date.now() });
  }

  free(instance: string): number {
    const known = this.seen.get(instance);
    return known === undefined || Date.now() - known.at > FRESH_MS ? UNKNOWN_FREE : known.free;
  }

  /** Most free first; equals in random order, so isolates that know nothing yet spread their jobs. */
  order<T extends { name: string }>(instances: readonly T[]): T[] {
    return instances
      .map((instance) => ({ instance, free: this.free(instance.name), tie: Math.random() }))
      .sort((a, b) => b.free - a.free || a.tie - b.tie)
      .map((x) => x.instance);
  }
}

/** One board per isolate: every request's engine client learns from every other's answers. */
export const isolateLoadBoard = new LoadBoard();
