import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../../src/errors/codes";
import { call } from "../../helpers/api";
import { cspDirectives } from "../../helpers/html";

type Sample = { lang: string; label: string; source: string };
type Operation = { operationId?: string; "x-codeSamples"?: Sample[] };
type Doc = { info: { description: string }; paths: Record<string, Record<string, Operation>> };

const docsDoc = async () => (await (await call("/docs/openapi.json")).json()) as Doc;

describe("/docs", () => {
  it("is the renderer's page under a per-response nonce: no inline script or style without it", async () => {
    const [first, second] = [await call("/docs"), await call("/docs")];
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = cspDirectives(first.headers.get("content-security-policy"));
    const nonce = /^'nonce-([^']+)'$/.exec(csp["script-src"]?.[0] ?? "")?.[1];
    expect(nonce).toBeTruthy();
    expect(second.headers.get("content-security-policy")).not.toContain(nonce);
    expect(csp).toMatchObject({
      "default-src": ["'none'"],
      "script-src": [`'nonce-${nonce}'`, "'report-sample'"],
      "connect-src": ["'self'"],
      "img-src": ["'self'", "data:"],
      "frame-ancestors": ["'none'"],
      "base-uri": ["'none'"],
      "form-action": ["'none'"],
    });
    // <style> elements: the nonce or a sha256 hash, never 'unsafe-inline'.
    expect(csp["style-src"]?.[0]).toBe(`'nonce-${nonce}'`);
    expect(csp["style-src"]?.slice(2).every((source) => /^'sha256-[A-Za-z0-9+/]+=*'$/.test(source))).toBe(
      true,
    );
    const html = await first.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((match) => match[1]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const attributes of scripts) expect(attributes).toContain(`nonce="${nonce}"`);
    const styles = [...html.matchAll(/<style\b([^>]*)>/g)].map((match) => match[1]);
    for (const attributes of styles) expect(attributes).toContain(`nonce="${nonce}"`);
    expect(html).toContain(`<meta property="csp-nonce" content="${nonce}"`);
    expect(html).toContain('import("/docs/assets/standalone.esm.js")');
    expect(html).not.toMatch(/https?:\/\//i);
  });

  it("serves the renderer's modules from the Worker's static assets, and nothing else from them", async () => {
    const entry = await call("/docs/assets/standalone.esm.js");
    expect(entry.status).toBe(200);
    expect(entry.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const text = await entry.text();
    expect(text).toContain("createApiReference");
    const chunk = /from"\.\/chunks\/([\w.-]+\.js)"/.exec(text)?.[1];
    expect(chunk).toBeTruthy();
    const imported = await call(`/docs/assets/chunks/${chunk}`);
    expect(imported.status).toBe(200);
    expect(imported.headers.get("cache-control")).toContain("immutable");
    await imported.arrayBuffer();
    for (const path of [
      "/docs/assets/standalone.js",
      "/docs/assets/standalone.esm.js.map",
      "/docs/assets/chunks/../standalone.js",
      "/standalone.esm.js",
    ]) {
      const response = await call(path);
      expect([path, response.status]).toEqual([path, 404]);
      await response.arrayBuffer();
    }
  });

  it("serves the code samples' source media", async () => {
    const response = await call("/docs/samples/sample.mp4");
    expect(response.headers.get("content-type")).toBe("video/mp4");
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(new TextDecoder().decode(bytes.subarray(4, 8))).toBe("ftyp");
    expect(bytes.byteLength).toBeGreaterThan(100_000);
    const missing = await call("/docs/samples/other.mp4");
    expect(missing.status).toBe(404);
    await missing.arrayBuffer();
  });
});

describe("/docs/openapi.json", () => {
  it("gives every operation a curl and a TypeScript-client sample for this origin", async () => {
    const doc = await docsDoc();
    const live = (await (await call("/v1/openapi.json")).json()) as Doc;
    expect(Object.keys(doc.paths)).toEqual(Object.keys(live.paths));
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const samples = operation["x-codeSamples"] ?? [];
        // The upload routes' samples are written out (src/docs/upload-samples.ts: tus requests depend on the
        // file and on the request before them) and run as shown by test/browser/upload-samples.test.ts.
        const upload = /^\/v1\/(uploads|direct-uploads)\b/.test(path);
        const discovery = operation.operationId === "discoverUploads";
        expect([path, method, samples.map((s) => `${s.lang}/${s.label}`)]).toEqual([
          path,
          method,
          ["Shell/curl", discovery ? "TypeScript/fetch" : "TypeScript/TypeScript client"],
        ]);
        const [curl, typescript] = samples.map((s) => s.source);
        const verb = method === "get" ? "" : method === "head" ? "-I " : `-X ${method.toUpperCase()} `;
        if (upload) {
          // The method as curl sends it (after -sS, -i, -o … flags) and this instance or the direct URL.
          const direct = path.startsWith("/v1/direct-uploads");
          expect(curl).toMatch(new RegExp(`(^|\\$\\()curl (-\\w+ (out\\.mp4 )?)*${verb}`, "m"));
          expect(curl).toContain(direct ? "$DIRECT_URL" : "http://api.test/v1/uploads");
          expect(typescript).toContain(direct ? "uploadDirect(process.env.DIRECT_URL!" : '"http://api.test');
          continue;
        }
        const concrete = path.replace(/\{[^}]+\}/g, "[^/' ]+");
        expect(curl).toMatch(new RegExp(`^curl ${verb}'http://api\\.test${concrete}`));
        expect(typescript).toContain(`p6.${method.toUpperCase()}(${JSON.stringify(path)}`);
        expect(typescript).toContain('createP6Client({ baseUrl: "http://api.test"');
      }
    }
    // The published contract stays free of them.
    expect(JSON.stringify(live)).not.toContain("x-codeSamples");
  });

  it("points the samples' sources at this service's sample media, by kind", async () => {
    const doc = await docsDoc();
    const source = (path: string) => {
      const curl = doc.paths[path]!.post!["x-codeSamples"]![0]!.source;
      return (
        JSON.parse(curl.slice(curl.indexOf("-d '") + 4, curl.lastIndexOf("'"))) as { source_url: string }
      ).source_url;
    };
    expect(source("/v1/video/extract-audio")).toBe("http://api.test/docs/samples/sample.mp4");
    expect(source("/v1/image/watermark")).toBe("http://api.test/docs/samples/sample.png");
    const extract = doc.paths["/v1/video/extract-audio"]!.post!["x-codeSamples"]!;
    expect(extract[0]!.source).toContain(`-H 'Idempotency-Key: example-extractAudio-1'`);
    expect(extract[1]!.source).not.toContain("Idempotency-Key");
  });

  it("carries the guides: every error code with its status, title and a link to its page", async () => {
    const { description } = (await docsDoc()).info;
    for (const heading of ["Authentication", "Errors", "Rate limits", "Idempotency", "Webhooks"])
      expect(description).toContain(`## ${heading}\n`);
    for (const [code, row] of Object.entries(ERROR_CODES)) {
      expect(description).toContain(
        `- **${row.status}** [\`${code}\`](/errors/${row.suffix}): ${row.title}. `,
      );
    }
    for (const language of ["TypeScript", "Python", "Go"])
      expect(description).toContain(`### Verification in ${language}`);
    expect(description).toContain("60 requests per minute");
  });
});
