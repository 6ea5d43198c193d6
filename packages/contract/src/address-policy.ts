/**
 * Which URLs and addresses a fetch may reach (decisions.md §11). Pure: no Node APIs, only ipaddr.js and the
 * WHATWG URL parser, so both sides use it: the engine's fetcher, and the Worker for source, watermark and
 * webhook URLs (their literal form, and the addresses a webhook's name resolves to).
 *
 * The URL parser already folds every IPv4 spelling (2130706433, 0x7f.1, 0177.0.0.1, 127.1, full-width
 * digits, percent-encoding) into dotted decimal and IPv6 literals into canonical form; the address check
 * then allows only global unicast. Names are checked after DNS resolution by the fetcher, which connects to
 * the address it checked.
 */
import ipaddr from "ipaddr.js";

export interface AddressPolicy {
  /** Local development only (ALLOW_PRIVATE_SOURCES): also allow loopback — nothing else private. */
  allowPrivate: boolean;
}

export type UrlCheck =
  | { ok: true; url: URL /** set when the host is an IP literal */; address?: string }
  | { ok: false; reason: string };

/** Ranges that ALLOW_PRIVATE_SOURCES=true opens up; everything else non-unicast stays closed. */
/** What ALLOW_PRIVATE_SOURCES opens: loopback only (decisions.md §11: "opt in to loopback sources"). */
const PRIVATE_RANGES = new Set(["loopback"]);

type Parsed = ReturnType<typeof ipaddr.parse>;

/** The IPv4 address an IPv6 address embeds and routes to (mapped, NAT64, 6to4, IPv4-compatible), if any. */
function embeddedIPv4(addr: Parsed): Parsed | null {
  if (addr.kind() !== "ipv6") return null;
  const v6 = addr as ipaddr.IPv6;
  const p = v6.parts;
  const fromParts = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const range = v6.range();
  if (range === "ipv4Mapped") return v6.toIPv4Address();
  if (range === "rfc6052" || range === "rfc6145") return fromParts(p[6] ?? 0, p[7] ?? 0);
  if (range === "6to4") return fromParts(p[1] ?? 0, p[2] ?? 0);
  // Deprecated IPv4-compatible form ::a.b.c.d (not :: and not ::1).
  if (p.slice(0, 6).every((x) => x === 0) && ((p[6] ?? 0) !== 0 || (p[7] ?? 0) > 1)) {
    return fromParts(p[6] ?? 0, p[7] ?? 0);
  }
  return null;
}

function parseAddress(input: string): Parsed | null {
  let text = input.trim();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  // A zone id (fe80::1%eth0) never names a public address.
  if (text.includes("%")) return null;
  if (ipaddr.isValid(text)) {
    try {
      return ipaddr.parse(text);
    } catch {
      return null;
    }
  }
  // Spellings ipaddr.js does not read (e.g. full-width digits): let the URL parser normalise them.
  try {
    const host = new URL(`http://${text.includes(":") ? `[${text}]` : text}/`).hostname.replace(
      /^\[|\]$/g,
      "",
    );
    return ipaddr.isValid(host) ? ipaddr.parse(host) : null;
  } catch {
    return null;
  }
}

/**
 * True when a fetch must not connect to this address, in any spelling. Strings that are not addresses at
 * all are forbidden too (the caller asked about an address).
 */
export function isForbiddenAddress(ip: string, policy: AddressPolicy = { allowPrivate: false }): boolean {
  const addr = parseAddress(ip);
  if (addr === null) return true;
  const inner = embeddedIPv4(addr);
  if (inner !== null) {
    // Teredo and other tunnelled forms are refused outright; mapped/NAT64/6to4/compat follow their IPv4.
    return isForbiddenAddress(inner.toString(), policy);
  }
  const range = addr.range();
  if (range === "unicast") return false;
  return !(policy.allowPrivate && PRIVATE_RANGES.has(range));
}

/** Classifies an address for messages and logs ("loopback", "private", "linkLocal", …). */
export function addressRange(ip: string): string {
  const addr = parseAddress(ip);
  if (addr === null) return "invalid";
  const inner = embeddedIPv4(addr);
  return inner === null ? addr.range() : `${addr.range()}(${inner.range()})`;
}

/** Host names that are local by definition and never need a DNS answer to refuse. */
function isLocalName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, "");
  return (
    h === "localhost" ||
    h.endsWith(".localhost") ||
    h.endsWith(".local") ||
    h.endsWith(".internal") ||
    h.endsWith(".home.arpa")
  );
}

/** The form of a source URL (the Worker's HttpUrl): a URL, http or https, without credentials. */
export function httpUrl(input: string): UrlCheck {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { ok: false, reason: "is not a valid URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, reason: "must use http or https" };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, reason: "must not contain credentials" };
  }
  return { ok: true, url };
}

/**
 * Checks a source URL before any network activity: its form (httpUrl), and the host when it is an IP
 * literal or a local-only name. Names that need DNS are checked again by the fetcher after resolution.
 */
export function checkUrl(input: string, policy: AddressPolicy): UrlCheck {
  const form = httpUrl(input);
  if (!form.ok) return form;
  const { url } = form;
  const host = url.hostname;
  if (host === "") return { ok: false, reason: "has no host" };
  const literal = host.startsWith("[") ? host.slice(1, -1) : host;
  if (ipaddr.isValid(literal) && (host.startsWith("[") || /^[0-9.]+$/.test(literal))) {
    if (isForbiddenAddress(literal, policy)) {
      return { ok: false, reason: "points to a private or reserved address" };
    }
    return { ok: true, url, address: literal };
  }
  if (!policy.allowPrivate && isLocalName(host)) {
    return { ok: false, reason: "points to a private or reserved address" };
  }
  return { ok: true, url };
}
