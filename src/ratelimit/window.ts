export type RateDecision = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the oldest counted request leaves the window (a slot frees). */
  resetSeconds: number;
  /** On refusal: seconds until a request would be allowed. */
  retryAfterSeconds: number;
};

export const WINDOW_SECONDS = 60;

export type Bucket = [second: number, count: number];

/**
 * A sliding window of one-second buckets (60 by default): a request is allowed when fewer than `limit`
 * requests were allowed in the last `windowSeconds`. Pure: takes the buckets, returns the decision and the buckets to keep. Its caller
 * runs it without awaiting, on one thread, so concurrent requests are counted exactly.
 */
export function slideWindow(
  previous: readonly Bucket[],
  limit: number,
  nowMs: number,
  windowSeconds = WINDOW_SECONDS,
) {
  const nowSecond = Math.floor(nowMs / 1000);
  const oldestKept = nowSecond - windowSeconds + 1;
  const buckets = previous.filter(([second]) => second >= oldestKept).map(([s, n]): Bucket => [s, n]);
  const used = buckets.reduce((sum, [, count]) => sum + count, 0);

  if (used >= limit) {
    let freed = 0;
    let retryAfterSeconds = windowSeconds;
    for (const [second, count] of buckets) {
      freed += count;
      if (used - freed < limit) {
        retryAfterSeconds = second + windowSeconds - nowSecond;
        break;
      }
    }
    const resetSeconds = buckets.length ? buckets[0]![0] + windowSeconds - nowSecond : 0;
    const decision: RateDecision = { allowed: false, limit, remaining: 0, resetSeconds, retryAfterSeconds };
    return { decision, buckets };
  }

  const last = buckets.at(-1);
  if (last && last[0] === nowSecond) last[1] += 1;
  else buckets.push([nowSecond, 1]);
  const decision: RateDecision = {
    allowed: true,
    limit,
    remaining: limit - used - 1,
    resetSeconds: buckets[0]![0] + windowSeconds - nowSecond,
    retryAfterSeconds: 0,
  };
  return { decision, buckets };
}
