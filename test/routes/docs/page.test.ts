import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../../src/errors/codes";
import { call } from "../../helpers/api";
import { cspDirectives, styleHashes, textOf } from "../../helpers/html";

type Doc = { paths: Record<string, Record<string, { operationId?: string; summary?: string }>> };

describe("/docs", () => {
  it("is HTML with a strict Content-Security-Policy that allows only its own inline stylesheet", async () => {
    const response = await call("/docs");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = cspDirectives(response.headers.get("content-security-policy"));
    expect(csp).toMatchObject({
      "default-src": ["'none'"],
      "img-src": ["'self'", "data:"],
      "frame-ancestors": ["'none'"],
      "base-uri": ["'none'"],
      "form-action": ["'none'"],
    });
    expect(csp["script-src"]).toBeUndefined();
    const html = await response.text();
    expect(csp["style-src"]).toEqual(await styleHashes(html));
    expect(html).not.toMatch(/<script|https?:\/\/(?!api\.test)[a-z0-9.-]+\/[^"]*\.(js|css|woff2?)/i);
  });

  it("renders every operation of the document, the error table, webhooks and the guides", async () => {
    const doc = (await (await call("/v1/openapi.json")).json()) as Doc;
    const text = textOf(await (await call("/docs")).text());
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        expect(text).toContain(`${method.toUpperCase()} ${path}`);
        if (op.summary) expect(text).toContain(op.summary);
        if (op.operationId) expect(text).toContain(op.operationId);
      }
    }
    for (const [code, row] of Object.entries(ERROR_CODES)) {
      expect(text).toContain(`${row.status} ${code} ${row.title} ${row.suffix}`);
    }
    for (const heading of ["Authentication", "Errors", "Rate limits", "Idempotency", "Webhooks"]) {
      expect(text).toContain(heading);
    }
    for (const language of ["TypeScript", "Python", "Go"])
      expect(text).toContain(`Verification in ${language}`);
    expect(text).toContain("curl -X POST 'http://api.test/v1/tasks'");
    expect(text).toContain("Each API key has its own limit: 60 requests per minute");
    expect(text).toContain('RateLimit-Policy: "default";q=60;w=60');
  });
});
