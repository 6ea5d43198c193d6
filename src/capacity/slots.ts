/**
 * An account's share of the engine (issue 13): every engine job runs under a slot of its account's
 * AccountSlots object. Over the share a synchronous call is refused with 503 + Retry-After and a task waits
 * (src/tasks/runner.ts), like when the engine itself is saturated.
 */
import type { Config } from "../config/config";
import type { SlotGrant } from "./account-slots";
import { engineUnavailable } from "./unavailable";

/** A lease outlives its holder's own time limit by this much, then lapses. */
const LEASE_MARGIN_MS = 60_000;

export function slotsFor(env: Env, accountId: string) {
  return env.ACCOUNT_SLOTS.get(env.ACCOUNT_SLOTS.idFromName(accountId));
}

export async function acquireSlot(
  env: Env,
  config: Config,
  accountId: string,
  holder: string,
  holdMs: number,
): Promise<SlotGrant> {
  return slotsFor(env, accountId).acquire(holder, config.accountMaxSlots, holdMs + LEASE_MARGIN_MS);
}

export async function releaseSlot(env: Env, accountId: string, holder: string): Promise<void> {
  await slotsFor(env, accountId).release(holder);
}

/**
 * Runs `work` (one synchronous call's engine work) under a slot of the account; 503 SERVICE_UNAVAILABLE with
 * Retry-After when the account already uses its whole share. The slot is released on every exit path.
 * `handOver`: the release is started and handed to the caller instead of awaited here, so that it overlaps the
 * caller's next round trip; the caller awaits it before answering, so the client's next call finds it free.
 */
export async function withAccountSlot<T>(
  svc: { env: Env; config: Config },
  accountId: string,
  holder: string,
  work: () => Promise<T>,
  handOver?: (released: Promise<void>) => void,
): Promise<T> {
  const grant = await acquireSlot(svc.env, svc.config, accountId, holder, svc.config.syncTimeoutMs);
  if (!grant.granted) {
    throw engineUnavailable(
      grant.retryAfterSeconds,
      `This account already uses its share of the media engine (${svc.config.accountMaxSlots} jobs at once); retry after the delay in Retry-After.`,
    );
  }
  try {
    return await work();
  } finally {
    const released = releaseSlot(svc.env, accountId, holder).catch(() => {});
    if (handOver) handOver(released);
    else await released;
  }
}
