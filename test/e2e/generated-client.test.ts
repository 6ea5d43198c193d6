import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveFixtures } from "./media.ts";
import { e2eService } from "./service.ts";

/**
 * A client generated from the live document by a third party, the way the openapi-typescript docs say
 * (default options): an integration that calls every /v1 operation type-checks against it (strict) and runs
 * against the live service, every call accepted; and the calls the server refuses (both sources or neither,
 * two watermark variants, end and duration, a JSON PATCH body, a missing required header) are type errors,
 * each proven by a `@ts-expect-error` that tsc would report unused, and refused by the server too.
 */

const { base, dir } = await e2eService();
const root = path.resolve(import.meta.dirname, "../..");
const template = path.join(import.meta.dirname, "generated-client/integration.ts");
const refusedTemplate = path.join(import.meta.dirname, "generated-client/refused.ts");
// Inside the project so that `openapi-fetch` resolves from its node_modules.
const work = path.join(root, "test-artifacts", `generated-client-${process.pid}`);
const require = createRequire(path.join(root, "clients/typescript/package.json"));
const openapiTS = require("openapi-typescript") as {
  default: (doc: unknown) => Promise<unknown>;
  astToString: (ast: unknown) => string;
};

type Doc = { paths: Record<string, Record<string, unknown>> };
let doc: Doc;
let fixtures: Awaited<ReturnType<typeof serveFixtures>>;

beforeAll(async () => {
  doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as Doc;
  mkdirSync(work, { recursive: true });
  writeFileSync(path.join(work, "api.d.ts"), openapiTS.astToString(await openapiTS.default(doc)));
  copyFileSync(template, path.join(work, "integration.ts"));
  copyFileSync(refusedTemplate, path.join(work, "refused.ts"));
  fixtures = await serveFixtures();
});
afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  await fixtures?.close();
});

/** An account with credits and a key of its own, made with the admin CLI as an operator would. */
function liveKey() {
  const admin = (...args: string[]) =>
    JSON.parse(
      execFileSync("npm", ["run", "--silent", "admin", "--", ...args], {
        cwd: dir,
        encoding: "utf8",
        env: { ...process.env, ADMIN_URL: base },
      }),
    );
  const account = admin("accounts", "create", "--name", "e2e-generated", "--credits", "100") as {
    id: string;
  };
  return (admin("keys", "create", account.id, "--name", "generated") as { key: string }).key;
}

/** What the two files export, as this test uses them (their own types live beside the generated api.d.ts). */
type Live = { baseUrl: string; apiKey: string; media: (name: string) => string; video: Uint8Array };
type Integration = (live: Live) => Promise<{
  statuses: Record<string, number>;
  uploadState?: string;
  contentBytes?: number;
  steps?: string[];
  uploadDuration?: number;
  duration?: number;
  urls: (string | undefined)[];
}>;
type Refused = (live: Live) => Promise<Record<string, number>>;
const load = async <T>(file: string) => (await import(pathToFileURL(path.join(work, file)).href)) as T;

async function live(): Promise<Live> {
  const video = new Uint8Array(await (await fetch(fixtures.media("av.mp4"))).arrayBuffer());
  return { baseUrl: base, apiKey: liveKey(), media: fixtures.media, video };
}

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
      "refused.ts",
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

  it("type-checks with the project's TypeScript, no casts; every refused call is a type error", () => {
    const { status, output } = typeCheck();
    expect(output).toBe("");
    expect(status).toBe(0);
    // tsc reports a `@ts-expect-error` with no error under it: each refused call below one is a type error.
    const calls = readFileSync(refusedTemplate, "utf8").split("await send(").slice(1);
    expect(calls.length).toBeGreaterThanOrEqual(16);
    for (const call of calls) expect(call.match(/@ts-expect-error/g), call).toHaveLength(1);
  });

  it("runs against the live service: every call of the integration is accepted", async () => {
    const { integration } = await load<{ integration: Integration }>("integration.ts");
    const service = await live();
    const result = await integration(service);
    const { canceled, ...statuses } = result.statuses;
    expect(statuses).toEqual({
      created: 201,
      page: 200,
      task: 200,
      pipeline: 201,
      image: 200,
      video: 200,
      cover: 200,
      trim: 200,
      audio: 200,
      extracted: 200,
      probe: 200,
      upload: 201,
      patched: 204,
      uploaded: 200,
      uploads: 200,
      content: 200,
      fromUpload: 200,
      direct: 201,
      started: 201,
      sent: 204,
      ran: 200,
      removed: 204,
      account: 200,
      usage: 200,
    });
    // The probe task ended within its wait (409: nothing to cancel), or was canceled first.
    expect([200, 409]).toContain(canceled);
    expect(result.uploadState).toBe("complete");
    expect(result.contentBytes).toBe(service.video.byteLength);
    expect(result.steps).toEqual(["clip succeeded", "marked succeeded"]);
    expect(result.uploadDuration).toBeCloseTo(result.duration!, 1);
    for (const url of result.urls) expect(url).toMatch(/^http/);
  });

  it("runs against the live service: every call the types refuse, the server refuses", async () => {
    const { refused } = await load<{ refused: Refused }>("refused.ts");
    const statuses = await refused(await live());
    const expected = Object.fromEntries(Object.keys(statuses).map((name) => [name, 400]));
    // tus: a body that is not application/offset+octet-stream is 415 (openapi-fetch sent JSON).
    expected["tus PATCH, a JSON body"] = 415;
    expect(statuses).toEqual(expected);
  });
});
