import { DurableObject } from "cloudflare:workers";
import { type Bucket, slideWindow } from "../ratelimit/window";

/** How many events a subject may have in a sliding window. */
export type Rule = { limit: number; windowSeconds: number };
/** A subject ("pair:…", "email:…", "signup:…") and the rule it is counted by. */
export type Check = { subject: string; rule: Rule };
export type ThrottleState = { blocked: boolean; retryAfterSeconds: number };

/**
 * Failed password sign-ins, counted three ways (docs/console.md "Throttles"). None of them can be run up by a
 * stranger against someone else's sign-in from another address:
 * - per (client address, email): 10 in 15 minutes. The one that usually trips: a user who mistyped, or a
 *   guesser at one account from one place; everyone else behind the same address is untouched.
 * - per email, from every address: 30 in an hour. Slower, so a distributed guesser still runs out; it can lock
 *   the owner's *password* out, never a passkey sign-in, which checks no throttle.
 * - per client address, across emails: 100 in 15 minutes: spraying one password over many emails. Ten times
 *   what one user can reach, so a shared address trips it only under an attack from that very address.
 */
export const SIGN_IN_PAIR: Rule = { limit: 10, windowSeconds: 15 * 60 };
export const SIGN_IN_EMAIL: Rule = { limit: 30, windowSeconds: 60 * 60 };
export const SIGN_IN_ADDRESS: Rule = { limit: 100, windowSeconds: 15 * 60 };
/** The per-pair figures, which the operator's token throttle (src/auth/operator-throttle.ts) shares. */
export const SIGN_IN_FAILURES = SIGN_IN_PAIR.limit;
export const SIGN_IN_WINDOW_SECONDS = SIGN_IN_PAIR.windowSeconds;

/** Sign-ups per client address: an hour's window, the limit from the config (SIGNUPS_PER_ADDRESS_PER_HOUR). */
export const SIGN_UP_WINDOW_SECONDS = 60 * 60;

/**
 * One object per throttled subject: its events in the rule's window, counted by the API's own sliding window
 * (src/ratelimit/window.ts) and kept in the object's storage. The class keeps its first name (its storage and
 * migration are bound to it); it now counts sign-ups and webhook resends too. The caller passes the time, so
 * tests can move it.
 */
export class SignInThrottle extends DurableObject<Env> {
  private buckets: Bucket[] | undefined;

  private load() {
    this.buckets ??= this.ctx.storage.kv.get<Bucket[]>("failures") ?? [];
    return this.buckets;
  }

  private save(buckets: Bucket[]) {
    this.buckets = buckets;
    this.ctx.storage.kv.put("failures", buckets);
  }

  /** Whether a further event is refused now (the window is only read: a check is not a failure). */
  state(now: number, rule: Rule): ThrottleState {
    const { decision } = slideWindow(this.load(), rule.limit, now, rule.windowSeconds);
    return { blocked: !decision.allowed, retryAfterSeconds: decision.retryAfterSeconds };
  }

  recordFailure(now: number, rule: Rule) {
    this.save(slideWindow(this.load(), rule.limit, now, rule.windowSeconds).buckets);
  }

  /** Forgets every event (a password reset clears the failures against the old password). */
  clear() {
    this.buckets = [];
    this.ctx.storage.kv.delete("failures");
  }

  /** Checks and counts in one step (one object runs one call at a time): a burst cannot all pass the check. */
  take(now: number, rule: Rule): ThrottleState {
    const { decision, buckets } = slideWindow(this.load(), rule.limit, now, rule.windowSeconds);
    if (decision.allowed) this.save(buckets);
    return { blocked: !decision.allowed, retryAfterSeconds: decision.retryAfterSeconds };
  }
}

type Throttles = Pick<Env, "SIGN_IN_THROTTLE">;

function stub(env: Throttles, subject: string) {
  return env.SIGN_IN_THROTTLE.get(env.SIGN_IN_THROTTLE.idFromName(subject));
}

/** What a password sign-in attempt is counted against: see the rules above. */
export function signInChecks(email: string, clientAddress: string): Check[] {
  return [
    { subject: `pair:${clientAddress} ${email}`, rule: SIGN_IN_PAIR },
    { subject: `email:${email}`, rule: SIGN_IN_EMAIL },
    { subject: `client:${clientAddress}`, rule: SIGN_IN_ADDRESS },
  ];
}

/** Refused when any subject is over its limit; then, the longest wait of them. */
export async function throttleState(env: Throttles, checks: Check[], now: number): Promise<ThrottleState> {
  const states = await Promise.all(checks.map(({ subject, rule }) => stub(env, subject).state(now, rule)));
  const blocked = states.filter((s) => s.blocked);
  return {
    blocked: blocked.length > 0,
    retryAfterSeconds: Math.max(0, ...blocked.map((s) => s.retryAfterSeconds)),
  };
}

export async function recordFailure(env: Throttles, checks: Check[], now: number) {
  await Promise.all(checks.map(({ subject, rule }) => stub(env, subject).recordFailure(now, rule)));
}

/** Counts one event when the subject is under its limit; refused (and not counted) otherwise. */
export async function takeSlot(env: Throttles, check: Check, now: number): Promise<ThrottleState> {
  const state = await stub(env, check.subject).take(now, check.rule);
  return {
    blocked: state.blocked,
    retryAfterSeconds: Math.max(state.blocked ? 1 : 0, state.retryAfterSeconds),
  };
}

/** One sign-up from this client address, when it has made fewer than `perHour` in the last hour. */
export function takeSignUpSlot(env: Throttles, clientAddress: string, perHour: number, now: number) {
  return takeSlot(
    env,
    { subject: `signup:${clientAddress}`, rule: { limit: perHour, windowSeconds: SIGN_UP_WINDOW_SECONDS } },
    now,
  );
}

/** Forgets the subjects' events: a completed password reset clears the failures counted against its email. */
export async function clearThrottles(env: Throttles, checks: Check[]) {
  await Promise.all(checks.map(({ subject }) => stub(env, subject).clear()));
}

/**
 * Mail a client address or an email may cause: reset links per email (3 an hour: a stranger cannot bury an
 * inbox) and per address (10 an hour, across emails); verification links per user (3 an hour).
 */
export const RESET_PER_EMAIL: Rule = { limit: 3, windowSeconds: 60 * 60 };
export const RESET_PER_ADDRESS: Rule = { limit: 10, windowSeconds: 60 * 60 };
export const VERIFY_RESENDS: Rule = { limit: 3, windowSeconds: 60 * 60 };

/** One reset mail for `email` from `clientAddress`: both under their limits, or neither counted. */
export async function takeResetSlot(env: Throttles, email: string, clientAddress: string, now: number) {
  const byAddress = await takeSlot(
    env,
    { subject: `reset-client:${clientAddress}`, rule: RESET_PER_ADDRESS },
    now,
  );
  if (byAddress.blocked) return byAddress;
  return takeSlot(env, { subject: `reset:${email}`, rule: RESET_PER_EMAIL }, now);
}

export function takeVerifySlot(env: Throttles, userId: string, now: number) {
  return takeSlot(env, { subject: `verify:${userId}`, rule: VERIFY_RESENDS }, now);
}
