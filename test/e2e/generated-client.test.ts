import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { e2eService } from "./service.ts";

/**
 * A client generated from the live document by a third party, the way the openapi-typescript docs say
 * (default options), and an integration that calls every /v1 operation type-checked against it.
 */

const { base } = await e2eService();
const root = path.resolve(import.meta.dirname, "../..");
const template = path.join(import.meta.dirname, "generated-client/integration.ts");
// Inside the project so that `openapi-fetch` resolves from its node_modules.
const work = path.join(root, "test-artifacts", `generated-client-${process.pid}`);
const require = createRequire(path.join(root, "clients/typescript/package.json"));
const openapiTS = require("openapi-typescript") as {
  default: (doc: unknown) => Promise<unknown>;
  astToString: (ast: unknown) => string;
};

type Doc = { paths: Record<string, Record<string, unknown>> };
let doc: Doc;

beforeAll(async () => {
  doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as Doc;
  mkdirSync(work, { recursive: true });
  writeFileSync(path.join(work, "api.d.ts"), openapiTS.astToString(await openapiTS.default(doc)));
  copyFileSync(template, path.join(work, "integration.ts"));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** tsc (the project's TypeScript) on the integration, strict: its diagnostics, one per line. */
function typeCheck() {
  const result = spawnSync(
    path.join(root, "node_modules/.bin/tsc"),
    [
      "--ignoreConfig",
      "--noEmit",
      "--strict",
      "--target",
      "es2023",
      "--module",
      "esnext",
      "--moduleResolution",
      "bundler",
      "--lib",
      "es2023,dom",
      "--skipLibCheck",
      "integration.ts",
    ],
    { cwd: work, encoding: "utf8" },
  );
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

describe("a client generated from the live document", () => {
  it("the integration calls every /v1 operation the document lists, without casts", () => {
    const source = readFileSync(template, "utf8");
    const called = [...source.matchAll(/client\.(GET|POST|PUT|PATCH|DELETE)\("([^"]+)"/g)].map(
      ([, method, p]) => `${method} ${p}`,
    );
    const operations = Object.entries(doc.paths)
      .filter(([p]) => p.startsWith("/v1/"))
      .flatMap(([p, item]) =>
        Object.keys(item)
          .filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))
          .map((m) => `${m.toUpperCase()} ${p}`),
      );
    expect(operations.filter((op) => op !== "GET /v1/openapi.json").sort()).toEqual(
      [...new Set(called)].sort(),
    );
    expect(source).not.toMatch(/\bas\s+(unknown|any|never|paths|\{)|<[A-Za-z]+>\s*\{|@ts-/);
  });

  it("type-checks with the project's TypeScript, no casts", () => {
    const { status, output } = typeCheck();
    expect(output).toBe("");
    expect(status).toBe(0);
  });
});
