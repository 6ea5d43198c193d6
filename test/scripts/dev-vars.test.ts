import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, expect, test } from "vitest";
import { readDevVars } from "../../scripts/lib/dev-vars.ts";

const exec = promisify(execFile);
const module = path.resolve(import.meta.dirname, "../../scripts/lib/dev-vars.ts");
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Several `npm run dev` of one checkout start at once (the browser tests do): each made .dev.vars with its own
 * secrets when none was there, and a process whose secrets lost would hand its engine an ENGINE_SECRET the
 * Worker (which reads the file) does not have. Every process must end with the secrets in the file.
 */
test("ensureDevVars in eight processes at once: one set of secrets, the file's", async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "p6-dev-vars-"));
  const file = path.join(dir, ".dev.vars");
  const go = path.join(dir, "go");
  // Each process loads the module, says so, and waits for the others: then all call it at once.
  const script = `import { existsSync, writeFileSync } from "node:fs";
    import { ensureDevVars } from ${JSON.stringify(module)};
    writeFileSync(${JSON.stringify(dir)} + "/ready-" + process.pid, "");
    while (!existsSync(${JSON.stringify(go)})) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    process.stdout.write(JSON.stringify(ensureDevVars(${JSON.stringify(file)}).vars));`;
  const running = Array.from({ length: 8 }, () =>
    exec(process.execPath, ["--input-type=module", "-e", script]),
  );
  while (readdirSync(dir).filter((name) => name.startsWith("ready-")).length < 8) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  writeFileSync(go, "");
  const runs = await Promise.all(running);
  for (const name of readdirSync(dir)) if (name !== ".dev.vars") rmSync(path.join(dir, name));
  const secrets = new Set(
    runs.map(({ stdout }) => (JSON.parse(stdout) as Record<string, string>).ENGINE_SECRET),
  );
  expect([...secrets]).toEqual([readDevVars(file).ENGINE_SECRET]);
  expect(readdirSync(dir)).toEqual([".dev.vars"]);
});
