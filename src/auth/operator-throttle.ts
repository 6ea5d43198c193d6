import type { Context } from "hono";
import { clientThrottleKey } from "../http/client-key";
import {
  type Check,
  recordFailure,
  SIGN_IN_FAILURES,
  SIGN_IN_PAIR,
  SIGN_IN_WINDOW_SECONDS,
  throttleState,
} from "../users/throttle";

/**
 * Guesses at ADMIN_TOKEN, through the dashboard's sign-in form or the admin API, throttled like customer
 * sign-in (src/users/throttle.ts): at most SIGN_IN_FAILURES (10) wrong tokens per client (an IPv4 address or an
 * IPv6 /64) in SIGN_IN_WINDOW_SECONDS (15 min); then every attempt from that client is refused, right token or not, until
 * the oldest failure leaves the window. Both doors count against one subject, so they cannot be alternated.
 */

/** The client's throttle key (src/http/client-key.ts: IPv4 by address, IPv6 by /64; "local" off Cloudflare). */
function subjects<E extends { Bindings: Env }>(c: Context<E>): Check[] {
  return [{ subject: `operator:${clientThrottleKey(c)}`, rule: SIGN_IN_PAIR }];
}

/** Seconds to wait when this address may not try again now, else null. */
export async function operatorRetryAfter<E extends { Bindings: Env }>(c: Context<E>): Promise<number | null> {
  const state = await throttleState(c.env, subjects(c), Date.now());
  return state.blocked ? Math.max(1, state.retryAfterSeconds) : null;
}

export function recordOperatorFailure<E extends { Bindings: Env }>(c: Context<E>): Promise<void> {
  return recordFailure(c.env, subjects(c), Date.now());
}

export const OPERATOR_THROTTLE = {
  failures: SIGN_IN_FAILURES,
  windowMinutes: SIGN_IN_WINDOW_SECONDS / 60,
} as const;
