export type RetryOptions = {
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** The longest wait the client accepts; a longer Retry-After is returned to the caller (default 30 s). */
  maxDelayMs?: number;
  /** First backoff when a 503 carries no Retry-After; doubled each retry (default 500 ms). */
  baseDelayMs?: number;
};

type Fetch = (request: Request) => Promise<Response>;

/** Milliseconds to wait from a Retry-After value (delta-seconds or HTTP-date), or undefined. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * A request may be sent again when the server did not act on it: always after a 429 (refused before any
 * work), and after a 503 when repeating cannot do the work twice (a read, or a request carrying an
 * Idempotency-Key).
 */
function retryable(request: Request, status: number) {
  if (status === 429) return true;
  if (status !== 503) return false;
  return request.method === "GET" || request.method === "HEAD" || request.headers.has("Idempotency-Key");
}

const sleep = (ms: number, signal?: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    signal?.throwIfAborted();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** Wraps fetch with bounded retries on 429 and 503 that honour Retry-After. */
export function retryingFetch(fetchImpl: Fetch, options: RetryOptions = {}): Fetch {
  const { maxRetries = 3, maxDelayMs = 30_000, baseDelayMs = 500 } = options;
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const response = await fetchImpl(request.clone());
      if (attempt >= maxRetries || !retryable(request, response.status)) return response;
      const delay = retryAfterMs(response.headers.get("Retry-After")) ?? baseDelayMs * 2 ** attempt;
      if (delay > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(delay, request.signal);
    }
  };
}
