import type { RequestFilter } from "./request-log";
import type { RequestEntry } from "./schema";

export { REQUEST_LOG_LIMIT, STATUS_CLASSES } from "./request-log";
export type { RequestEntry } from "./schema";

/**
 * How long an isolate gathers an account's log entries before it sends them to the account's object in one
 * call. Under load one call carries the rows of many requests (one Durable Object request and one storage
 * transaction instead of one per API request); alone, a request's row is in the log this much later.
 */
export const LOG_BATCH_MS = 50;

/** Per account: the entries waiting for the write this isolate has scheduled. */
const pending = new Map<string, RequestEntry[]>();

/** The account's request log (one RequestLog object per account). */
export function requestLogFor(env: Env, accountId: string) {
  return env.REQUEST_LOG.get(env.REQUEST_LOG.idFromName(accountId));
}

/**
 * Queues one request's row for its account's log. The first entry of a batch returns the write (the caller
 * hands it to waitUntil, which keeps the isolate alive until it is done); entries that join the batch in the
 * next LOG_BATCH_MS return undefined: they are written by that same call. The entries live in the isolate's
 * memory only for that long, and the write that carries them is bound to a request that waits for it.
 */
export function recordRequest(env: Env, accountId: string, entry: RequestEntry): Promise<void> | undefined {
  const batch = pending.get(accountId);
  if (batch) {
    batch.push(entry);
    return undefined;
  }
  const entries = [entry];
  pending.set(accountId, entries);
  return (async () => {
    try {
      await scheduler.wait(LOG_BATCH_MS);
    } finally {
      pending.delete(accountId);
    }
    await requestLogFor(env, accountId).record(entries);
  })();
}

/** One page of an account's log, newest first, optionally by status class and key. */
export async function listRequests(env: Env, accountId: string, filter: RequestFilter) {
  return requestLogFor(env, accountId).list(filter);
}
