import { describe, expect, it } from "vitest";
import { checkWebhookUrl } from "../../src/webhooks/url";

const refusedAlways = [
  ["ftp scheme", "ftp://example.com/hook"],
  ["file scheme", "file:///etc/passwd"],
  ["javascript scheme", "javascript:alert(1)"],
  ["userinfo", "https://user:pass@example.com/hook"],
  ["username only", "https://user@example.com/hook"],
  ["not a URL", "not a url"],
  ["link-local metadata", "http://169.254.169.254/latest/meta-data"],
  ["link-local IPv6", "http://[fe80::1]/hook"],
  ["mapped link-local", "http://[::ffff:169.254.169.254]/hook"],
  ["multicast", "http://224.0.0.1/hook"],
  ["unspecified", "http://0.0.0.0/hook"],
  ["broadcast", "http://255.255.255.255/hook"],
] as const;

const loopbackForms = [
  ["loopback", "http://127.0.0.1/hook"],
  ["loopback, elsewhere in 127/8", "http://127.8.9.10:8080/hook"],
  ["loopback, short form", "http://127.1/hook"],
  ["loopback, decimal", "http://2130706433/hook"],
  ["loopback, hex", "http://0x7f.1/hook"],
  ["loopback, octal", "http://0177.0.0.1/hook"],
  ["loopback IPv6", "http://[::1]/hook"],
  ["IPv4-mapped loopback", "http://[::ffff:127.0.0.1]/hook"],
  ["IPv4-mapped loopback, hex", "http://[::ffff:7f00:1]/hook"],
  ["localhost", "http://localhost:8080/hook"],
  ["LOCALHOST., trailing dot", "http://LOCALHOST./hook"],
  ["*.localhost", "https://api.localhost/hook"],
] as const;

const privateForms = [
  ["private 10/8", "http://10.0.0.5/hook"],
  ["private 172.16/12", "https://172.16.3.4/hook"],
  ["private 192.168/16", "http://192.168.1.1/hook"],
  ["private, decimal", "http://167772161/hook"],
  ["IPv4-mapped private", "http://[::ffff:10.0.0.1]/hook"],
  ["CGNAT", "http://100.64.0.1/hook"],
  ["ULA", "http://[fd00::1]/hook"],
  ["mDNS name", "http://printer.local/hook"],
  ["internal name", "http://metadata.google.internal/hook"],
] as const;

const publicForms = [
  ["https host", "https://hooks.example.com/p6?token=abc"],
  ["http host with port", "http://example.com:8080/hook"],
  ["public IPv4", "https://93.184.216.34/hook"],
  ["public IPv6", "https://[2606:2800:220:1:248:1893:25c8:1946]/hook"],
] as const;

describe("checkWebhookUrl", () => {
  describe.each(refusedAlways)("%s is refused even in local development", (_name, url) => {
    it.each([false, true])("allowPrivate=%s", (allowPrivate) => {
      expect(checkWebhookUrl(url, allowPrivate)).toMatch(/^The webhook URL /);
    });
  });

  it.each([...loopbackForms, ...privateForms])("%s is refused in production", (_name, url) => {
    expect(checkWebhookUrl(url, false)).toBe("The webhook URL points to a private or reserved address.");
  });

  it.each(loopbackForms)("%s is allowed in local development (ALLOW_PRIVATE_SOURCES)", (_name, url) => {
    expect(checkWebhookUrl(url, true)).toBeNull();
  });

  it.each(privateForms)("%s stays refused in local development: only loopback opens", (_name, url) => {
    expect(checkWebhookUrl(url, true)).toBe("The webhook URL points to a private or reserved address.");
  });

  it.each(publicForms)("%s is allowed", (_name, url) => {
    expect(checkWebhookUrl(url, false)).toBeNull();
  });

  it("names the rule that was broken", () => {
    expect(checkWebhookUrl("ftp://example.com/", false)).toBe("The webhook URL must use http or https.");
    expect(checkWebhookUrl("https://a:b@example.com/", false)).toBe(
      "The webhook URL must not contain credentials.",
    );
  });
});
