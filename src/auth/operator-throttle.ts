import type { Context } from "hono";
import { clientThrottleKey } from "../http/client-key";
import { type Check, OPERATOR_FAILURES, recordFailure, throttleState } from "../users/throttle";

/**
 * Guesses at ADMIN_TOKEN, through the dashboard's sign-in form or the admin API (src/users/throttle.ts,
 * OPERATOR_FAILURES): at most 10 wrong tokens per client (IPv4 address or IPv6 /64) in 15 minutes; then every
 * attempt from that client is refused, right token or not, until the oldest failure leaves the window. Both
 * doors count against one subject, so they cannot be alternated. A refusal, not a challenge as for customers:
 * the admin API's callers are programs, and only the operator's own client can be refused.
 */

/** The client's throttle key (src/http/client-key.ts: IPv4 by address, IPv6 by /64; "local" off Cloudflare). */
function subjects<E extends { Bindings: Env }>(c: Context<E>): Check[] {
  return [{ subject: `operator:${clientThrottleKey(c)}`, rule: OPERATOR_FAILURES }];
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
  failures: OPERATOR_FAILURES.limit,
  windowMinutes: OPERATOR_FAILURES.windowSeconds / 60,
} as const;
