import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import {
  base64ToBytes,
  base64UrlDecode,
  base64UrlEncode,
  base64UrlToBytes,
  bytesToBase64,
  bytesToBase64Url,
  bytesToHex,
} from "../../src/util/encoding";

/** src/util/encoding.ts (on Hono's base64 utilities) against Node's Buffer as the reference. */
describe("encodings", () => {
  const samples = Array.from({ length: 40 }, (_, n) => crypto.getRandomValues(new Uint8Array(n)));

  it("base64 and hex of 0 to 39 random bytes, and back", () => {
    for (const bytes of samples) {
      expect(bytesToBase64(bytes)).toBe(Buffer.from(bytes).toString("base64"));
      expect(bytesToHex(bytes)).toBe(Buffer.from(bytes).toString("hex"));
      expect([...base64ToBytes(bytesToBase64(bytes))]).toEqual([...bytes]);
    }
  });

  it("base64url of 0 to 39 random bytes without padding, and back; other alphabets throw", () => {
    for (const bytes of samples) {
      expect(bytesToBase64Url(bytes)).toBe(Buffer.from(bytes).toString("base64url"));
      expect([...base64UrlToBytes(bytesToBase64Url(bytes))]).toEqual([...bytes]);
    }
    expect(() => base64UrlToBytes("ab+/")).toThrow();
  });

  it("a view into a larger buffer encodes only its own bytes", () => {
    const whole = crypto.getRandomValues(new Uint8Array(64));
    const view = whole.subarray(5, 21);
    expect(bytesToBase64(view)).toBe(Buffer.from(view).toString("base64"));
  });

  it("base64url text without padding, decoded back; not base64url or not UTF-8 is null", () => {
    for (const text of ["", "a", "ab", "abc", "ünïcödé ✓ 🎉", '{"id":"01J","n":1}']) {
      const encoded = base64UrlEncode(text);
      expect(encoded).toBe(Buffer.from(text, "utf8").toString("base64url"));
      expect(base64UrlDecode(encoded)).toBe(text);
    }
    expect(base64UrlDecode("a+b/")).toBeNull();
    expect(base64UrlDecode("abcde")).toBeNull();
    expect(base64UrlDecode(Buffer.from([0xff, 0xfe]).toString("base64url"))).toBeNull();
  });
});
