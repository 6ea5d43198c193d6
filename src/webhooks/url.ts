import { addressRange, checkUrl, isForbiddenAddress } from "@p6/contract/address-policy";
import { lookup } from "../fetch/doh";
import type { TargetVerdict } from "../fetch/targets";

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
 * This is the check on the URL alone; names are resolved by the Worker over DNS over HTTPS
 * (resolveWebhookTarget) at creation and before every attempt. Redirects are never followed (a 3xx is a failed attempt), so a public name
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

/**
 * Where a webhook URL's name points now, by the same address rule: every A and AAAA address the name has
 * (asked over DNS over HTTPS at `dohUrl`, src/fetch/doh.ts) must be allowed, else the whole answer is refused
 * (a rebinding-style answer mixing a public and a private address included). Call after checkWebhookUrl: IP
 * literals need no lookup, nor do `localhost` names where `allowPrivate` opens loopback. No engine involved,
 * so webhooks leave while the engine is down.
 */
export async function resolveWebhookTarget(
  url: string,
  settings: { dohUrl: string; allowPrivate: boolean },
  signal?: AbortSignal,
): Promise<TargetVerdict> {
  const destination = await webhookDestination(url, settings, signal);
  return destination.kind === "allowed" ? { kind: "allowed" } : destination;
}

/** Where a checked webhook may be sent: the addresses that passed the rule, in the resolver's order. */
export type WebhookDestination =
  | { kind: "allowed"; addresses: string[] }
  | Exclude<TargetVerdict, { kind: "allowed" }>;

/**
 * resolveWebhookTarget, with the addresses that passed: the one an IP literal names, 127.0.0.1 for a
 * `localhost` name where loopback is open (RFC 6761: it resolves to loopback), else every A and AAAA address the
 * name has over DNS over HTTPS. A delivery connects to one of these and nothing else (deliver.ts), so no second
 * lookup can send it elsewhere.
 */
export async function webhookDestination(
  url: string,
  settings: { dohUrl: string; allowPrivate: boolean },
  signal?: AbortSignal,
): Promise<WebhookDestination> {
  const local = checkUrl(url, { allowPrivate: settings.allowPrivate });
  if (!local.ok) return { kind: "refused", reason: `webhook ${local.reason}` };
  if (local.address !== undefined) return { kind: "allowed", addresses: [local.address] };
  if (settings.allowPrivate && isLoopback(local.url, undefined))
    return { kind: "allowed", addresses: ["127.0.0.1"] };
  const found = await lookup(settings.dohUrl, local.url.hostname, signal);
  if (found.kind === "failed") return { kind: "unchecked", reason: "the address check is unavailable" };
  if (found.kind === "none") return { kind: "unresolved", reason: "DNS lookup of the webhook host failed" };
  const policy = { allowPrivate: settings.allowPrivate };
  if (found.addresses.some((address) => isForbiddenAddress(address, policy)))
    return { kind: "refused", reason: "webhook resolves to a private or reserved address" };
  return { kind: "allowed", addresses: found.addresses };
}
