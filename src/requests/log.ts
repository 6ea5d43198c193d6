import type { RequestFilter } from "./request-log";
import type { RequestEntry } from "./schema";

export { REQUEST_LOG_LIMIT, STATUS_CLASSES, type StatusClass } from "./request-log";
export type { RequestEntry } from "./schema";

/** The account's request log (one RequestLog object per account). */
export function requestLogFor(env: Env, accountId: string) {
  return env.REQUEST_LOG.get(env.REQUEST_LOG.idFromName(accountId));
}

/** Stores one request in its account's log (the middleware calls it after the response, in waitUntil). */
export async function recordRequest(env: Env, accountId: string, entry: RequestEntry) {
  await requestLogFor(env, accountId).record(entry);
}

/** One page of an account's log, newest first, optionally by status class and key. */
export async function listRequests(env: Env, accountId: string, filter: RequestFilter) {
  return requestLogFor(env, accountId).list(filter);
}
