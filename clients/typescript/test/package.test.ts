/**
 * The client as a consumer gets it: `npm pack` (its prepack builds dist/ with tsdown), the tarball installed
 * into an empty folder with its dependencies (packed from the repository's node_modules, installed offline),
 * then used from there: on every Node found on PATH (Debian's Node 20 here), the Node 22 running the tests and
 * a Node 24 (installed once from the npm registry into .tools/node24),
 * type-checked as a consumer's TypeScript project, bundled for a browser and for a Worker (then run in workerd);
 * an upload to a stand-in tus endpoint on every Node and in workerd.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const client = path.resolve(import.meta.dirname, "..");
const root = path.resolve(client, "../..");
const here = path.join(import.meta.dirname, "package");
let dir = "";
let tarball = "";

/** The client's runtime dependencies and theirs, as installed in the repository. */
function dependencyDirs(): string[] {
  const found = new Map<string, string>();
  const visit = (from: string) => {
    const pkg = createRequire(path.join(from, "package.json"))(path.join(from, "package.json"));
    for (const name of Object.keys(pkg.dependencies ?? {})) {
      if (found.has(name)) continue;
      let at = from;
      for (;;) {
        const candidate = path.join(at, "node_modules", name);
        try {
          found.set(name, realpathSync(candidate));
          break;
        } catch {
          if (at === path.dirname(at)) throw new Error(`${name} is not installed`);
          at = path.dirname(at);
        }
      }
      visit(found.get(name)!);
    }
  };
  visit(client);
  return [...found.values()];
}

/**
 * A Node 24 for the smoke test, from the npm registry (package node-<platform>-<arch>@24, as
 * scripts/node22.mjs gets Node 22), installed once into .tools/node24. The README promises Node ≥ 20.
 */
function node24(): string {
  const pkg = `node-${process.platform}-${process.arch}`;
  const prefix = path.join(root, ".tools", "node24");
  const bin = path.join(prefix, "node_modules", pkg, "bin", "node");
  if (!existsSync(bin)) {
    execFileSync("npm", ["install", "--prefix", prefix, `${pkg}@24`, "--no-audit", "--no-fund"], {
      stdio: "pipe",
    });
  }
  return bin;
}

/** Every distinct node binary on PATH, the one running this test (Node ≥ 22.18) and a Node 24. */
function nodes(): { bin: string; version: string }[] {
  const onPath = spawnSync("which", ["-a", "node"], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
  const bins = new Map<string, string>();
  for (const bin of [process.execPath, ...onPath, node24()]) {
    const real = realpathSync(bin);
    if (!bins.has(real)) bins.set(real, bin);
  }
  return [...bins.values()].map((bin) => ({
    bin,
    version: execFileSync(bin, ["--version"], { encoding: "utf8" }).trim(),
  }));
}

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "p6-client-pack-"));
  execFileSync("npm", ["pack", "--pack-destination", dir], { cwd: client, stdio: "pipe" });
  tarball = readdirSync(dir).find((f) => f.startsWith("p6-media-client-"))!;
  for (const dep of dependencyDirs()) {
    execFileSync("npm", ["pack", "--ignore-scripts", "--pack-destination", dir, dep], { stdio: "pipe" });
  }
  writeFileSync(
    path.join(dir, "package.json"),
    '{ "name": "consumer", "private": true, "type": "module" }\n',
  );
  const tarballs = readdirSync(dir).filter((f) => f.endsWith(".tgz"));
  execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", ...tarballs], {
    cwd: dir,
    stdio: "pipe",
  });
  for (const file of ["smoke.mjs", "consumer.ts", "worker.mjs"]) {
    copyFileSync(path.join(here, file), path.join(dir, file));
  }
  // npm pack and an offline npm install: seconds on a quiet machine, over 120 s once with two suites at once.
}, 600_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// Under load, tsc on the consumer or a Node start alone can pass the default 5 s.
describe("the packed client", { timeout: 60_000 }, () => {
  it("holds the built JavaScript and declarations, not the sources", () => {
    const listing = execFileSync("tar", ["-tzf", path.join(dir, tarball)], { encoding: "utf8" });
    // Two entries (index: browsers, bundlers, Workers; node: the "node" condition) and the chunk they share.
    const files = listing.split("\n").filter(Boolean).sort();
    expect(
      files.map((f) => f.replace(/-[\w-]{8}\.d\.ts$/, "-*.d.ts").replace(/-[\w-]{8}\.js$/, "-*.js")),
    ).toEqual([
      "package/README.md",
      "package/dist/common-*.d.ts",
      "package/dist/index.d.ts",
      "package/dist/index.js",
      "package/dist/node.d.ts",
      "package/dist/node.js",
      "package/dist/webhooks-*.js",
      "package/package.json",
    ]);
  });

  const found = nodes();
  it("is run on Node 22, Node 24 and every other Node on PATH (Debian's 20 here)", () => {
    const majors = found.map((n) => n.version.split(".")[0]);
    expect(found.map((n) => n.version)).toContain(process.version);
    expect(majors).toContain("v24");
  });

  it.each(found)("works installed on Node $version ($bin)", ({ bin, version }) => {
    const result = spawnSync(bin, ["smoke.mjs"], { cwd: dir, encoding: "utf8", timeout: 30_000 });
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe(`ok ${version}`);
    expect(result.status).toBe(0);
  });

  it("type-checks as a dependency of a TypeScript project (nodenext)", () => {
    const result = spawnSync(
      process.execPath,
      [
        path.join(root, "node_modules/typescript/bin/tsc"),
        "--noEmit",
        "--strict",
        "--module",
        "nodenext",
        "--moduleResolution",
        "nodenext",
        "--target",
        "es2022",
        "--lib",
        "es2022,dom",
        "--types",
        "",
        "consumer.ts",
      ],
      { cwd: dir, encoding: "utf8" },
    );
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("bundles for a browser and for a neutral platform without Node built-ins", async () => {
    for (const options of [
      { platform: "browser" as const },
      { platform: "neutral" as const, mainFields: ["module", "main"] },
    ]) {
      const result = await build({
        stdin: { contents: 'export * from "@p6/media-client";', resolveDir: dir, loader: "js" },
        bundle: true,
        format: "esm",
        write: false,
        logLevel: "silent",
        ...options,
      });
      expect(result.errors).toEqual([]);
      const code = result.outputFiles[0]!.text;
      expect(code).not.toMatch(/from ["']node:|require\(["'](node:)?(crypto|buffer|http|stream|fs)["']\)/);
      expect(code).toContain("verifyWebhook");
      // tus-js-client's browser build (XMLHttpRequest), and the fetch stack for runtimes without it.
      expect(code).toContain("new XMLHttpRequest");
      expect(code).toContain("FetchHttpStack");
    }
  });

  it("runs in a Worker (bundled like wrangler, in workerd)", async () => {
    const UPLOAD = "/v1/uploads/01JD5Z8X4QK3M7R2T9V6W1Y0AC";
    const patches: number[] = [];
    const api = createServer((req, res) => {
      let bytes = 0;
      req.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      req.on("end", () => {
        if (req.method === "POST" && req.url === "/v1/uploads") {
          res.writeHead(201, { "Tus-Resumable": "1.0.0", Location: UPLOAD }).end();
        } else if (req.method === "PATCH" && req.url === UPLOAD) {
          patches.push(bytes);
          const offset = Number(req.headers["upload-offset"]) + bytes;
          res.writeHead(204, { "Tus-Resumable": "1.0.0", "Upload-Offset": String(offset) }).end();
        } else {
          res.writeHead(200, { "Content-Type": "application/json" });
          res.end(JSON.stringify({ id: "r1", key: req.headers["idempotency-key"] }));
        }
      });
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    const bundle = await build({
      entryPoints: [path.join(dir, "worker.mjs")],
      bundle: true,
      format: "esm",
      platform: "neutral",
      conditions: ["workerd", "worker", "browser"],
      mainFields: ["browser", "module", "main"],
      write: false,
      logLevel: "silent",
    });
    const mf = new Miniflare(
      convertV4MiniflareOptions({
        modules: true,
        script: bundle.outputFiles[0]!.text,
        compatibilityDate: "2025-09-01",
        bindings: { API_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}` },
      }),
    );
    try {
      const answer = await (await mf.dispatchFetch("http://worker/")).json();
      expect(answer).toMatchObject({
        status: 200,
        data: { id: "r1", key: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      });
      expect((answer as { webhook: unknown }).webhook).toMatchObject({
        id: "msg_1",
        event: "completed",
        task: { id: "t1" },
      });
      expect((answer as { upload: unknown }).upload).toMatchObject({ id: UPLOAD.split("/").pop() });
      expect(patches).toEqual([40_000, 40_000, 20_000]);
    } finally {
      await mf.dispose();
      api.close();
    }
  }, 60_000);
});
