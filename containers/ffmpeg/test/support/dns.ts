/**
 * DNS for tests: the public internet's names lie outside the system, so a fixed table stands in for them.
 * Pure (no Node APIs): the engine's tests, the Worker's global setup and its workerd tests all import it.
 */

/** fetcher.ts's ResolvedAddress, restated: that module is Node-only and this one is not. */
type ResolvedAddress = { address: string; family: 4 | 6 };

/** Names that resolve to addresses no fetch may reach (ALLOW_PRIVATE_SOURCES=false), one per kind. */
export const REFUSED_DNS: Record<string, ResolvedAddress[]> = {
  "loopback.test": [{ address: "127.0.0.1", family: 4 }],
  "loopback6.test": [{ address: "::1", family: 6 }],
  "internal.test": [{ address: "10.1.2.3", family: 4 }],
  "home.test": [{ address: "192.168.1.1", family: 4 }],
  "metadata.test": [{ address: "169.254.169.254", family: 4 }],
  "unspecified.test": [{ address: "0.0.0.0", family: 4 }],
  "mapped.test": [{ address: "::ffff:127.0.0.1", family: 6 }],
  "ula.test": [{ address: "fd00::1", family: 6 }],
  // A rebinding-style answer: one public address, one private. The whole answer is refused.
  "rebind.test": [
    { address: "93.184.216.34", family: 4 },
    { address: "127.0.0.1", family: 4 },
  ],
};

export const REFUSED_NAMES = Object.keys(REFUSED_DNS);

export const TEST_DNS: Record<string, ResolvedAddress[]> = {
  "public.test": [
    { address: "93.184.216.34", family: 4 },
    { address: "2606:2800:220:1:248:1893:25c8:1946", family: 6 },
  ],
  ...REFUSED_DNS,
};

/** A resolver answering from `table`; any other name fails as getaddrinfo does (ENOTFOUND). */
export function tableResolver(table: Record<string, ResolvedAddress[]> = TEST_DNS) {
  return async (hostname: string): Promise<ResolvedAddress[]> => {
    const answer = table[hostname];
    if (answer === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    }
    return answer;
  };
}
