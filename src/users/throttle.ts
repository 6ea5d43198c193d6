import { DurableObject } from "cloudflare:workers";
import { type Bucket, slideWindow } from "../ratelimit/window";

/** How many events a subject may have in a sliding window. */
export type Rule = { limit: number; windowSeconds: number };
/** A subject ("pair:…", "email:…", "signup:…") and the rule it is counted by. */
export type Check = { subject: string; rule: Rule };
export type ThrottleState = { blocked: boolean; retryAfterSeconds: number };

/**
 * Failed password sign-ins, counted three ways (docs/console.md "Throttles"). None of them refuses anyone: past
 * `challengeFrom` failures in its window, a subject makes every password sign-in that involves it solve a
 * challenge first (src/users/challenge.ts), harder the more failures it holds. A stranger can make someone's
 * sign-in cost a second of their browser's work, never keep the right password out (issue 40: 100 failures for
 * unknown emails used to lock everyone behind an address out for 15 minutes, 30 an owner for an hour).
 * - per (client, email): 3 in 15 minutes. A guesser at one account from one place;
 * - per email, from every client: 10 in an hour. A guesser spread over many places;
 * - per client, across emails: 20 in 15 minutes. One password sprayed over many emails.
 * The client is its throttle key (src/http/client-key.ts: IPv4 by address, IPv6 by /64).
 */
export type ChallengeRule = { windowSeconds: number; challengeFrom: number };
export const SIGN_IN_PAIR: ChallengeRule = { windowSeconds: 15 * 60, challengeFrom: 3 };
export const SIGN_IN_EMAIL: ChallengeRule = { windowSeconds: 60 * 60, challengeFrom: 10 };
export const SIGN_IN_CLIENT: ChallengeRule = { windowSeconds: 15 * 60, challengeFrom: 20 };
/** The hardest challenge (each level doubles the work; src/users/challenge.ts). */
export const MAX_LEVEL = 6;
/** Failures kept per subject and window: far past the last level, so the count stays bounded. */
const FAILURES_KEPT = 10_000;

/**
 * Guesses at the operator's ADMIN_TOKEN (src/auth/operator-throttle.ts): 10 in 15 minutes per client, then
 * refused. A machine client cannot solve a challenge, and only the operator's own client can be locked out.
 */
export const OPERATOR_FAILURES: Rule = { limit: 10, windowSeconds: 15 * 60 };

/** Sign-ups per client address: an hour's window, the limit from the config (SIGNUPS_PER_ADDRESS_PER_HOUR). */
export const SIGN_UP_WINDOW_SECONDS = 60 * 60;

/**
 * One object per throttled subject (failed sign-ins, sign-ups, reset mails, verification and webhook resends,
 * guesses at ADMIN_TOKEN): its events in the rule's window, counted by the API's own sliding window
 * (src/ratelimit/window.ts) and kept in the object's storage. The caller passes the time, so tests can move it.
 */
export class Throttle extends DurableObject<Env> {
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

  /** Events in the last `windowSeconds`. */
  count(now: number, windowSeconds: number): number {
    const oldest = Math.floor(now / 1000) - windowSeconds + 1;
    return this.load().reduce((sum, [second, n]) => (second >= oldest ? sum + n : sum), 0);
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

type Throttles = Pick<Env, "THROTTLE">;

function stub(env: Throttles, subject: string) {
  return env.THROTTLE.get(env.THROTTLE.idFromName(subject));
}

export type SignInSubject = { subject: string; rule: ChallengeRule };

/** What a password sign-in attempt is counted against: see the rules above. */
export function signInSubjects(email: string, client: string): SignInSubject[] {
  return [
    { subject: `pair:${client} ${email}`, rule: SIGN_IN_PAIR },
    { subject: `email:${email}`, rule: SIGN_IN_EMAIL },
    { subject: `client:${client}`, rule: SIGN_IN_CLIENT },
  ];
}

/** The subject of the client alone (what the sign-in page knows before an email is typed). */
export const clientSubject = (client: string): SignInSubject => ({
  subject: `client:${client}`,
  rule: SIGN_IN_CLIENT,
});

/**
 * The challenge a sign-in involving `subjects` must pass now: 0 for none, else its level, 1 + log2 of the
 * failures over the threshold of the subject that has the most (3 failures of a pair: 1, 6: 2, 12: 3, …), at
 * most MAX_LEVEL.
 */
export async function challengeLevel(env: Throttles, subjects: SignInSubject[], now: number) {
  const counts = await Promise.all(
    subjects.map(({ subject, rule }) => stub(env, subject).count(now, rule.windowSeconds)),
  );
  let level = 0;
  subjects.forEach(({ rule }, i) => {
    const failures = counts[i]!;
    if (failures >= rule.challengeFrom)
      level = Math.max(level, 1 + Math.floor(Math.log2(failures / rule.challengeFrom)));
  });
  return Math.min(level, MAX_LEVEL);
}

/** Counts a failed password sign-in against every subject. */
export async function recordSignInFailure(env: Throttles, subjects: SignInSubject[], now: number) {
  await Promise.all(
    subjects.map(({ subject, rule }) =>
      stub(env, subject).recordFailure(now, { limit: FAILURES_KEPT, windowSeconds: rule.windowSeconds }),
    ),
  );
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
export async function clearThrottles(env: Throttles, checks: { subject: string }[]) {
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
