/**
 * DNS over HTTPS from the Worker (RFC 8484's JSON form, as Cloudflare's and Google's resolvers answer it:
 * `GET <endpoint>?name=<host>&type=A|AAAA` with `Accept: application/dns-json`). Workers cannot resolve
 * names themselves; this is how the Worker learns where a webhook's name points without asking the media
 * engine, so deliveries leave while the engine is down or cold. The endpoint is DOH_URL (default
 * Cloudflare's, https://cloudflare-dns.com/dns-query); tests point it at a loopback stand-in.
 */

/** How long one lookup (both record types) may take. */
const DOH_TIMEOUT_MS = 5_000;

/** DNS record types asked for: A and AAAA. CNAMEs are followed by the resolver and listed before them. */
const RECORD_TYPES = { A: 1, AAAA: 28 } as const;

export type Lookup =
  /** Every address the name has now (at least one). */
  | { kind: "addresses"; addresses: string[] }
  /** The resolver answered: no such name, or no address records. */
  | { kind: "none" }
  /** The resolver could not be asked, or answered something unreadable (SERVFAIL included). */
  | { kind: "failed"; reason: string };

type DohAnswer = { Status?: number; Answer?: { type?: number; data?: string }[] };

async function query(endpoint: string, name: string, type: keyof typeof RECORD_TYPES, signal: AbortSignal) {
  const url = new URL(endpoint);
  url.searchParams.set("name", name);
  url.searchParams.set("type", type);
  const response = await fetch(url, { headers: { Accept: "application/dns-json" }, signal });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`DoH answered HTTP ${response.status}`);
  }
  const body = (await response.json()) as DohAnswer;
  // RCODE 0 NOERROR, 3 NXDOMAIN; anything else (2 SERVFAIL, 5 REFUSED, …) is a failed lookup.
  if (body.Status === 3) return [];
  if (body.Status !== 0) throw new Error(`DoH answered DNS status ${body.Status}`);
  return (body.Answer ?? [])
    .filter((record) => record.type === RECORD_TYPES[type] && typeof record.data === "string")
    .map((record) => record.data as string);
}

/** A and AAAA records of `hostname`, asked at once. */
export async function lookup(endpoint: string, hostname: string, signal?: AbortSignal): Promise<Lookup> {
  const name = hostname.replace(/\.$/, "");
  const timeout = AbortSignal.timeout(DOH_TIMEOUT_MS);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    const [v4, v6] = await Promise.all([
      query(endpoint, name, "A", both),
      query(endpoint, name, "AAAA", both),
    ]);
    const addresses = [...v4, ...v6];
    return addresses.length > 0 ? { kind: "addresses", addresses } : { kind: "none" };
  } catch (error) {
    return { kind: "failed", reason: String((error as Error)?.message ?? error) };
  }
}
