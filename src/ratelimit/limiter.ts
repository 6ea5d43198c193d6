import { DurableObject } from "cloudflare:workers";

export type RateDecision = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the oldest counted request leaves the window (a slot frees). */
  resetSeconds: number;
  /** On refusal: seconds until a request would be allowed. */
  retryAfterSeconds: number;
};

const WINDOW_SECONDS = 60;

type Bucket = [second: number, count: number];

/**
 * One instance per API key. A sliding window of 60 one-second buckets: a request is allowed when fewer than
 * `limit` requests were allowed in the last 60 s. The method never awaits, so the object's single thread makes
 * concurrent requests exact; the buckets persist in the object's storage, so eviction forgets nothing.
 */
export class RateLimiter extends DurableObject<Env> {
  private buckets: Bucket[] | undefined;

  hit(limit: number): RateDecision {
    const nowSecond = Math.floor(Date.now() / 1000);
    const oldestKept = nowSecond - WINDOW_SECONDS + 1;
    this.buckets ??= this.ctx.storage.kv.get<Bucket[]>("buckets") ?? [];
    const buckets = this.buckets.filter(([second]) => second >= oldestKept);
    const used = buckets.reduce((sum, [, count]) => sum + count, 0);

    if (used >= limit) {
      this.buckets = buckets;
      let freed = 0;
      let retryAfterSeconds = WINDOW_SECONDS;
      for (const [second, count] of buckets) {
        freed += count;
        if (used - freed < limit) {
          retryAfterSeconds = second + WINDOW_SECONDS - nowSecond;
          break;
        }
      }
      const resetSeconds = buckets.length ? buckets[0]![0] + WINDOW_SECONDS - nowSecond : 0;
      return { allowed: false, limit, remaining: 0, resetSeconds, retryAfterSeconds };
    }

    const last = buckets.at(-1);
    if (last && last[0] === nowSecond) last[1] += 1;
    else buckets.push([nowSecond, 1]);
    this.buckets = buckets;
    this.ctx.storage.kv.put("buckets", buckets);
    return {
      allowed: true,
      limit,
      remaining: limit - used - 1,
      resetSeconds: buckets[0]![0] + WINDOW_SECONDS - nowSecond,
      retryAfterSeconds: 0,
    };
  }
}
