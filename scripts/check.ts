/**
 * npm run check: everything that must hold before a commit lands, in order:
 * generated Env types up to date, no deep import across the Worker/engine seam (scripts/check-seam.ts), type check (Worker, Node scripts and tests, client, engine, the console's browser scripts), the client's
 * generated types and the console's browser bundles current, lint/format, no dead code (knip), and a
 * wrangler deploy --dry-run build.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const bin = (name: string) => path.join(root, "node_modules/.bin", name);
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };

const steps: [string, string, string[]][] = [
  ["Env types are current", bin("wrangler"), ["types", "--strict-vars=false", "--check"]],
  [
    "no deep import across the Worker/engine seam (shared code through @p6/contract)",
    process.execPath,
    ["scripts/check-seam.ts"],
  ],
  ["type check: Worker and its tests", bin("tsc"), ["-p", "tsconfig.json"]],
  ["type check: scripts, bench, e2e", bin("tsc"), ["-p", "tsconfig.node.json"]],
  ["type check: TypeScript client", bin("tsc"), ["-p", "clients/typescript/tsconfig.json"]],
  ["type check: the console's browser scripts", bin("tsc"), ["-p", "src/console/browser/tsconfig.json"]],
  [
    "the console's browser bundles built from the current sources (npm run console:build)",
    process.execPath,
    ["scripts/build-console-assets.ts", "--check"],
  ],
  [
    "TypeScript client generated from the current OpenAPI document",
    process.execPath,
    ["clients/typescript/scripts/generate.ts", "--check"],
  ],
  ["lint and format", bin("biome"), ["check", "--max-diagnostics=20", "."]],
  [
    "no dead code: every file, export and dependency used (knip; knip.jsonc says why each ignore is not dead)",
    bin("knip"),
    ["--no-progress"],
  ],
  [
    "build (wrangler deploy --dry-run; the container image needs Docker and is built at deploy)",
    bin("wrangler"),
    ["deploy", "--dry-run", "--outdir", "dist", "--containers-rollout=none"],
  ],
];
if (existsSync(path.join(root, "containers/ffmpeg/tsconfig.json"))) {
  steps.splice(3, 0, ["type check: media engine", bin("tsc"), ["-p", "containers/ffmpeg/tsconfig.json"]]);
}

for (const [name, command, args] of steps) {
  const started = Date.now();
  const result = spawnSync(command, args, { cwd: root, env, encoding: "utf8" });
  if (result.status !== 0) {
    console.error(`✗ ${name}\n${result.stdout}${result.stderr}`);
    process.exit(1);
  }
  console.log(`✓ ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
