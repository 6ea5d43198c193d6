import { DurableObject } from "cloudflare:workers";

/** Holder (request or task id) → when its lease lapses (epoch ms). */
type Leases = Record<string, number>;

export type SlotGrant = { granted: true } | { granted: false; retryAfterSeconds: number };

/** How soon a refused caller should ask again: a held slot is freed by a job's end, usually within seconds. */
export const SLOT_RETRY_AFTER_SECONDS = 2;

/**
 * One object per account: the engine jobs it has in flight, sync and tasks together, across every Worker
 * isolate and engine instance. A slot is a lease with an expiry, so a holder that dies without releasing
 * (an evicted isolate, a killed alarm) frees its slot when the lease lapses instead of leaking it.
 */
export class AccountSlots extends DurableObject<Env> {
  private leases(now: number): Leases {
    const all = this.ctx.storage.kv.get<Leases>("leases") ?? {};
    const live: Leases = {};
    for (const [holder, until] of Object.entries(all)) if (until > now) live[holder] = until;
    return live;
  }

  /** Takes (or renews) `holder`'s slot when fewer than `max` are held. */
  acquire(holder: string, max: number, ttlMs: number): SlotGrant {
    const now = Date.now();
    const leases = this.leases(now);
    if (!(holder in leases) && Object.keys(leases).length >= max) {
      return { granted: false, retryAfterSeconds: SLOT_RETRY_AFTER_SECONDS };
    }
    leases[holder] = now + ttlMs;
    this.ctx.storage.kv.put("leases", leases);
    return { granted: true };
  }

  release(holder: string): void {
    const leases = this.leases(Date.now());
    delete leases[holder];
    this.ctx.storage.kv.put("leases", leases);
  }

  /** Holders with a live lease (for tests and operators). */
  held(): string[] {
    return Object.keys(this.leases(Date.now()));
  }
}
