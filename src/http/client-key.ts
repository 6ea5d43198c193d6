import type { Context } from "hono";
import ipaddr from "ipaddr.js";

/**
 * The client a throttle counts (docs/console.md "Throttles"): the address Cloudflare reports in
 * `CF-Connecting-IP`, an IPv4 client by its whole address and an IPv6 client by its /64. One IPv6 subscriber
 * or host is usually given a whole /64 (RFC 6177 and common practice), so keying by the full address let one
 * client rotate through 2^64 addresses past every per-address limit (the campaign of issue 40 did: 8 of 8
 * sign-ups accepted, 120 sign-in failures unthrottled). An IPv4-mapped IPv6 address is its IPv4 address.
 *
 * Without the header (local development, the tests) every request is one client, "local"; a value that is not
 * an address (only possible off Cloudflare) is its own key, as before.
 */
export function clientKey(reported: string | undefined | null): string {
  const value = reported?.trim();
  if (!value) return "local";
  if (!ipaddr.isValid(value)) return `raw:${value.slice(0, 64)}`;
  const address = ipaddr.parse(value);
  if (address.kind() === "ipv4") return address.toString();
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const prefix = v6.parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(":");
  return `${prefix}::/64`;
}

/** The throttle key of the request's client. */
export function clientThrottleKey(c: Context): string {
  return clientKey(c.req.header("cf-connecting-ip"));
}
