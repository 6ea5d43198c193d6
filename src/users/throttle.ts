import { DurableObject } from "cloudflare:workers";
import { type Bucket, slideWindow } from "../ratelimit/window";

/** Failed sign-ins allowed per email and per client address in the window; the next attempt is refused. */
export const SIGN_IN_FAILURES = 10;
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;

export type ThrottleState = { blocked: boolean; retryAfterSeconds: number };

/**
 * One object per throttled subject ("email:<address>" or "client:<ip>"): the failed sign-ins of the last 15
 * minutes, counted by the API's own sliding window (src/ratelimit/window.ts) and kept in the object's storage.
 * The caller passes the time, so tests can move it.
 */
export class SignInThrottle extends DurableObject<Env> {
  private buckets: Bucket[] | undefined;

  private load() {
    this.buckets ??= this.ctx.storage.kv.get<Bucket[]>("failures") ?? [];
    return this.buckets;
  }

  /** Whether a further attempt is refused now (the window is only read: a check is not a failure). */
  state(now: number): ThrottleState {
    const { decision } = slideWindow(this.load(), SIGN_IN_FAILURES, now, SIGN_IN_WINDOW_SECONDS);
    return { blocked: !decision.allowed, retryAfterSeconds: decision.retryAfterSeconds };
  }

  recordFailure(now: number) {
    const { buckets } = slideWindow(this.load(), SIGN_IN_FAILURES, now, SIGN_IN_WINDOW_SECONDS);
    this.buckets = buckets;
    this.ctx.storage.kv.put("failures", buckets);
  }
}

function stub(env: Env, subject: string) {
  return env.SIGN_IN_THROTTLE.get(env.SIGN_IN_THROTTLE.idFromName(subject));
}

/** The subjects a sign-in attempt counts against: the email it names and the address it comes from. */
export function throttleSubjects(email: string, clientAddress: string) {
  return [`email:${email}`, `client:${clientAddress}`];
}

/** Refused when any subject is over its limit; then, the longest wait of them. */
export async function throttleState(env: Env, subjects: string[], now: number): Promise<ThrottleState> {
  const states = await Promise.all(subjects.map((subject) => stub(env, subject).state(now)));
  const blocked = states.filter((s) => s.blocked);
  return {
    blocked: blocked.length > 0,
    retryAfterSeconds: Math.max(0, ...blocked.map((s) => s.retryAfterSeconds)),
  };
}

export async function recordFailure(env: Env, subjects: string[], now: number) {
  await Promise.all(subjects.map((subject) => stub(env, subject).recordFailure(now)));
}
