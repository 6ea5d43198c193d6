import type { Context } from "hono";
import type { RelyingParty } from "../users/passkeys";

/** The WebAuthn relying party of a request: its host and origin, as the browser sees them. */
export function relyingParty(c: Context): RelyingParty {
  const url = new URL(c.req.url);
  return { id: url.hostname, origin: url.origin };
}

/** The client address sign-in attempts are counted against (Cloudflare sets the header; locally, one bucket). */
export function clientAddress(c: Context) {
  return c.req.header("cf-connecting-ip") ?? "local";
}
