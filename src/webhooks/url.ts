import { addressRange, checkUrl } from "@p6/contract/address-policy";

/** Loopback names (RFC 6761) and address ranges, in every spelling the address policy folds. */
function isLoopback(url: URL, address: string | undefined): boolean {
  if (address !== undefined) return /^loopback$|\(loopback\)$/.test(addressRange(address));
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  return host === "localhost" || host.endsWith(".localhost");
}

/**
 * Webhook URLs obey the source-fetching rule (decisions.md §11), through the engine's pure address policy:
 * http(s) only, no userinfo, no IP literal outside global unicast in any spelling (127.1, 2130706433,
 * [::ffff:127.0.0.1], …) and no local-only names (localhost, *.localhost, *.local, …). `allowPrivate` (local
 * development, ALLOW_PRIVATE_SOURCES) opens loopback only, as §11 says, so a developer can point webhooks at
 * a receiver on their machine; private networks, link-local and the rest stay closed.
 *
 * This is the check on the URL alone; names are resolved by the engine (src/fetch/targets.ts) at creation
 * and before every attempt. Redirects are never followed (a 3xx is a failed attempt), so a public name
 * cannot bounce a delivery somewhere private.
 *
 * Returns null when the URL may be used, else a reason for the client.
 */
export function checkWebhookUrl(url: string, allowPrivate: boolean): string | null {
  const strict = checkUrl(url, { allowPrivate: false });
  if (strict.ok) return null;
  if (allowPrivate) {
    const local = checkUrl(url, { allowPrivate: true });
    if (local.ok && isLoopback(local.url, local.address)) return null;
  }
  return `The webhook URL ${strict.reason}.`;
}
