import { describe, expect, it } from "vitest";
import { clientKey } from "../../src/http/client-key";

/** The throttles' notion of a client (issue 40): an IPv4 address, an IPv6 /64. */
describe("clientKey", () => {
  it.each([
    ["an IPv4 address is itself", "198.51.100.7", "198.51.100.7"],
    ["an IPv6 address is its /64", "2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"],
    ["every address of one /64 is one client", "2001:db8:1:2::1", "2001:db8:1:2::/64"],
    ["in any spelling", "2001:0DB8:0001:0002:0000:0000:0000:0009", "2001:db8:1:2::/64"],
    ["another /64 is another client", "2001:db8:1:3::1", "2001:db8:1:3::/64"],
    ["an IPv4-mapped IPv6 address is its IPv4 address", "::ffff:198.51.100.7", "198.51.100.7"],
    ["no header (local development): one client", undefined, "local"],
    ["an empty header: one client", " ", "local"],
    ["not an address (only off Cloudflare): itself", "nat-1", "raw:nat-1"],
  ])("%s", (_, reported, key) => {
    expect(clientKey(reported)).toBe(key);
  });
});
