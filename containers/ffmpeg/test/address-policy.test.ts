/** The pure address policy shared with the Worker: every spelling of a private address is refused. */

import { checkUrl, isForbiddenAddress } from "@p6/contract/address-policy";
import { describe, expect, test } from "vitest";

const closed = { allowPrivate: false };
const devMode = { allowPrivate: true };

/** Hosts (as written in a URL) that must never be fetched in production. */
export const FORBIDDEN_HOSTS = [
  "127.0.0.1",
  "127.0.0.2",
  "127.1",
  "127.0.1",
  "2130706433",
  "0x7f000001",
  "0x7f.1",
  "0x7f.0.0.1",
  "0177.0.0.1",
  "017700000001",
  "0177.1",
  "127.0.0.1.",
  "%31%32%37.0.0.1",
  "０x7f.1",
  "0",
  "0.0.0.0",
  "[::]",
  "[::1]",
  "[0:0:0:0:0:0:0:1]",
  "[::ffff:127.0.0.1]",
  "[::ffff:7f00:1]",
  "[0:0:0:0:0:ffff:127.0.0.1]",
  "[::127.0.0.1]",
  "[64:ff9b::127.0.0.1]",
  "[2002:7f00:1::]",
  "169.254.169.254",
  "0xa9fea9fe",
  "2852039166",
  "[::ffff:169.254.169.254]",
  "[fe80::1]",
  "10.0.0.1",
  "012.0.0.1",
  "0xa.0.0.1",
  "167772161",
  "172.16.0.1",
  "172.31.255.255",
  "192.168.1.1",
  "3232235777",
  "[::ffff:192.168.1.1]",
  "100.64.0.1",
  "100.127.255.254",
  "[fc00::1]",
  "[fd12:3456:789a::1]",
  "224.0.0.1",
  "239.255.255.250",
  "[ff02::1]",
  "255.255.255.255",
  "240.0.0.1",
  "198.18.0.1",
  "[2001::1]",
  "localhost",
  "LOCALHOST.",
  "foo.localhost",
] as const;

describe("checkUrl", () => {
  test.each(FORBIDDEN_HOSTS)("refuses http://%s/", (host) => {
    const check = checkUrl(`http://${host}/video.mp4`, closed);
    expect(check.ok).toBe(false);
  });

  test("at least 20 spellings are covered", () => {
    expect(FORBIDDEN_HOSTS.length).toBeGreaterThanOrEqual(20);
  });

  test.each([
    ["ftp://example.com/a.mp4", "must use http or https"],
    ["file:///etc/passwd", "must use http or https"],
    ["gopher://example.com/", "must use http or https"],
    ["data:video/mp4;base64,AAAA", "must use http or https"],
    ["http://user:pass@example.com/a.mp4", "must not contain credentials"],
    ["http://example.com@127.0.0.1/a.mp4", "must not contain credentials"],
    ["not a url", "is not a valid URL"],
  ])("refuses %s (%s)", (url, reason) => {
    expect(checkUrl(url, closed)).toEqual({ ok: false, reason });
  });

  test.each([
    "http://example.com/a.mp4",
    "https://8.8.8.8/a.mp4",
    "http://[2606:4700:4700::1111]/a",
    "https://[::ffff:8.8.8.8]/x",
  ])("allows public %s", (url) => {
    expect(checkUrl(url, closed).ok).toBe(true);
  });

  test("ALLOW_PRIVATE_SOURCES opens loopback only: never private networks, metadata or multicast", () => {
    expect(checkUrl("http://127.0.0.1:8080/a", devMode).ok).toBe(true);
    expect(checkUrl("http://[::1]:8080/a", devMode).ok).toBe(true);
    expect(checkUrl("http://10.1.2.3/a", devMode).ok).toBe(false);
    expect(checkUrl("http://192.168.1.1/a", devMode).ok).toBe(false);
    expect(checkUrl("http://[fd00::1]/a", devMode).ok).toBe(false);
    expect(checkUrl("http://100.64.0.1/a", devMode).ok).toBe(false);
    expect(checkUrl("http://localhost/a", devMode).ok).toBe(true);
    expect(checkUrl("http://169.254.169.254/latest/meta-data", devMode).ok).toBe(false);
    expect(checkUrl("http://[fe80::1]/", devMode).ok).toBe(false);
    expect(checkUrl("http://224.0.0.1/", devMode).ok).toBe(false);
    expect(checkUrl("http://0.0.0.0/", devMode).ok).toBe(false);
  });
});

describe("isForbiddenAddress", () => {
  test.each([
    "127.0.0.1",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:a9fe:a9fe",
    "169.254.169.254",
    "10.0.0.1",
    "100.64.0.1",
    "fd00::1",
    "fe80::1%eth0",
    "0.0.0.0",
    "::",
    "0x7f.1",
    "2130706433",
    "garbage",
  ])("%s is forbidden", (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  test.each(["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "93.184.216.34"])(
    "%s is allowed",
    (ip) => {
      expect(isForbiddenAddress(ip)).toBe(false);
    },
  );
});
