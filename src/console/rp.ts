import type { Context } from "hono";
import { clientThrottleKey } from "../http/client-key";
import type { RelyingParty } from "../users/passkeys";

/** The WebAuthn relying party of a request: its host and origin, as the browser sees them. */
export function relyingParty(c: Context): RelyingParty {
  const url = new URL(c.req.url);
  return { id: url.hostname, origin: url.origin };
}

/**
 * The client sign-ins, sign-ups and reset mails are counted against: its throttle key (src/http/client-key.ts,
 * IPv4 by address, IPv6 by /64; locally, without CF-Connecting-IP, one bucket).
 */
export const clientAddress = (c: Context) => clientThrottleKey(c);
