#!/usr/bin/env node
// Runs a script under Node >= 22.18 (wrangler, vitest 5 and our .ts scripts need it). When the machine's Node
// is older, a Node 22 is installed once from the npm registry (package node-<platform>-<arch>) into .tools/node
// and put first on PATH for the script and everything it starts.
//   node scripts/node22.mjs <script> [args…]    run the script
//   node scripts/node22.mjs --which             print the path of the Node binary it would use
// Plain JavaScript on purpose: it must run on the old Node it replaces.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const [major, minor] = process.versions.node.split(".").map(Number);
const recentEnough = major > 22 || (major === 22 && minor >= 18);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

let node = process.execPath;
if (!recentEnough) {
  const platform = process.platform === "win32" ? "win" : process.platform;
  const pkg = `node-${platform}-${process.arch}`;
  const prefix = path.join(root, ".tools", "node");
  node = path.join(prefix, "node_modules", pkg, "bin", process.platform === "win32" ? "node.exe" : "node");
  if (!existsSync(node)) {
    console.error(
      `Node ${process.versions.node} is older than 22.18: installing ${pkg}@22 into .tools/node (once)…`,
    );
    // npm's report goes to stderr: `--which` prints the path alone on stdout, which callers capture with $(…).
    execFileSync("npm", ["install", "--prefix", prefix, `${pkg}@22`, "--no-audit", "--no-fund"], {
      stdio: ["ignore", process.stderr, "inherit"],
      shell: process.platform === "win32",
    });
  }
}

const args = process.argv.slice(2);
if (args[0] === "--which") {
  console.log(node);
  process.exit(0);
}
const env = { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ""}` };
const result = spawnSync(node, args, { stdio: "inherit", env });
if (result.signal) process.kill(process.pid, result.signal);
process.exit(result.status ?? 1);
