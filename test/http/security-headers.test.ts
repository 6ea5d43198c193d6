import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signFileUrl } from "../../src/files/signing";
import { storeFile } from "../../src/files/store";
import { BASE, call, db, newAccount } from "../helpers/api";

/** Headers on every response (issue 13): nosniff and Referrer-Policy everywhere, CSP and no framing on HTML. */

async function storedFilePath(contentType: string) {
  const { accountId } = await newAccount();
  const now = Date.now();
  const bytes = new TextEncoder().encode("<html><script>alert(1)</script></html>");
  const file = await storeFile(db(), env.FILES, {
    accountId,
    requestId: "01JD5Z8X4QK3M7R2T9V6W1Y0AB",
    name: "out.bin",
    contentType,
    body: new Blob([bytes]).stream(),
    sizeBytes: bytes.byteLength,
    expiresAt: now + 3_600_000,
    now,
  });
  const url = await signFileUrl(BASE, "test-file-signing-secret", file.id, file.name, file.expiresAt);
  return url.slice(BASE.length);
}

type Case = [name: string, request: () => Promise<Response>, status: number, type: RegExp];

const CASES: Case[] = [
  ["JSON: GET /", () => call("/"), 200, /^application\/json/],
  ["JSON: GET /v1/openapi.json", () => call("/v1/openapi.json"), 200, /^application\/json/],
  ["problem+json: 401 without a key", () => call("/v1/tasks"), 401, /^application\/problem\+json/],
  ["problem+json: 404", () => call("/nowhere"), 404, /^application\/problem\+json/],
  [
    "problem+json: admin API with a bad token",
    () => call("/admin/v1/accounts", { headers: { Authorization: "Bearer wrong" } }),
    401,
    /^application\/problem\+json/,
  ],
  [
    // HTML bytes under a type the service gives outputs: nosniff keeps a browser from reading them as HTML.
    "a stored file",
    async () => call(await storedFilePath("image/png")),
    200,
    /^image\/png/,
  ],
  [
    "a stored file, HEAD",
    async () => call(await storedFilePath("video/mp4"), { method: "HEAD" }),
    200,
    /^video/,
  ],
  ["a file URL with a bad signature", () => call("/files/nope/x.mp4?exp=1&sig=x"), 400, /problem\+json/],
  ["HTML: /docs", () => call("/docs"), 200, /^text\/html/],
  ["HTML: dashboard sign-in", () => call("/dashboard/login"), 200, /^text\/html/],
];

describe.each(CASES)("%s", (name, request, status, type) => {
  it("nosniff and a Referrer-Policy", async () => {
    const response = await request();
    expect([response.status, response.headers.get("content-type")]).toEqual([
      status,
      expect.stringMatching(type),
    ]);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("referrer-policy")).toMatch(/^(no-referrer|same-origin)$/);
    if (type.source.includes("html")) {
      expect(response.headers.get("content-security-policy")).toMatch(/(^|; )frame-ancestors 'none'/);
      expect(response.headers.get("x-frame-options")).toBe("DENY");
    } else if (name.includes("file")) {
      // A stored file is never a document of this origin, whatever it holds (issue 31).
      expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    } else {
      expect(response.headers.get("content-security-policy")).toBeNull();
    }
  });
});

describe("HTML pages", () => {
  it("a page without its own policy gets the strict default: no scripts at all", async () => {
    const csp = (await call("/errors/rate-limit")).headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/script-src/);
  });

  it("a page with its own policy keeps it (the dashboard's nonces) and its own Referrer-Policy", async () => {
    const response = await call("/dashboard/login");
    expect(response.headers.get("content-security-policy")).toMatch(/script-src 'nonce-[^']+'/);
    expect(response.headers.get("referrer-policy")).toBe("same-origin");
  });
});
