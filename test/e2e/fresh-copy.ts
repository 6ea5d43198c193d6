import { execFile, execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startGroup, stopGroup, waitForLine } from "../../scripts/lib/processes.ts";

const root = path.resolve(import.meta.dirname, "../..");
/** The dot-entries of node_modules that are packages' (npm's), not caches. */
const KEPT_DOT_ENTRIES = new Set([".bin", ".package-lock.json"]);

/**
 * A copy of the project as a fresh clone would have it (the files git tracks plus new, not-ignored ones —
 * so uncommitted work is tested too), with no node_modules, .dev.vars or local state (installAndStart brings
 * node_modules).
 */
export function freshCopy() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "p6-fresh-"));
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: root,
    encoding: "utf8",
  })
    .split("\0")
    .filter(Boolean);
  for (const file of files) {
    try {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      cpSync(path.join(root, file), path.join(dir, file));
    } catch {
      // listed by git but deleted in the working tree
    }
  }
  return dir;
}

export type RunningService = {
  dir: string;
  base: string;
  apiKey: string;
  webhookSecret: string;
  stop: () => void;
};

/** A command to its end; its error says the exit code and what the command printed on stderr. */
const finish = promisify(execFile);

/**
 * The README's first command, `npm install && npm run dev`, in `dir`; resolves once the key is printed.
 * `npm install` runs over a copy of this checkout's node_modules (its caches left out), so it reconciles that
 * tree with the copy's package-lock.json instead of unpacking ~55,000 files again: 18 s of CPU for the copy and
 * 2 s for the install, against 79 s for an install from nothing (docs/performance.md, session 21). An install
 * from nothing is what `.ci/run` does, on its fresh clone, before it runs `npm test`.
 */
export async function installAndStart(dir: string, port: number): Promise<RunningService> {
  // Not execFileSync: the global setup starts this in the background, so it must not block the event loop.
  const modules = path.join(root, "node_modules");
  if (existsSync(modules)) {
    // Not the dot-directories vitest and Vite write while this runs (.vitest-cache, .vite, .vite-temp, whose
    // files come and go: copying them failed a run with "cp exited 1"), only the packages, .bin and npm's
    // own .package-lock.json.
    const entries = readdirSync(modules).filter(
      (name) => !name.startsWith(".") || KEPT_DOT_ENTRIES.has(name),
    );
    mkdirSync(path.join(dir, "node_modules"));
    try {
      await finish("cp", [
        "-a",
        ...entries.map((name) => path.join(modules, name)),
        path.join(dir, "node_modules"),
      ]);
    } catch (error) {
      // Whatever went wrong, an install from nothing is still the README's command: said, and done.
      console.warn(
        `e2e: copying node_modules failed (${(error as Error).message}); npm install from nothing`,
      );
      rmSync(path.join(dir, "node_modules"), { recursive: true, force: true });
    }
  }
  await finish("npm", ["install", "--no-audit", "--no-fund"], { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
  const lines: string[] = [];
  const dev = startGroup("fresh-dev", "npm", ["run", "dev"], {
    cwd: dir,
    env: { PORT: String(port), ENGINE_PORT: String(port + 1) },
    onLine: (line) => lines.push(line),
    quiet: true,
  });
  try {
    // As generous as the browser tests: on a loaded machine a first start (17 font uploads, migrations) took 4-5 min.
    const [, apiKey] = await waitForLine(dev, lines, /API key:\s+(\S+)/, 480_000);
    const [, webhookSecret] = await waitForLine(dev, lines, /Webhook secret:\s+(\S+)/, 5_000);
    return {
      dir,
      base: `http://127.0.0.1:${port}`,
      apiKey: apiKey!,
      webhookSecret: webhookSecret!,
      stop: () => stopGroup(dev),
    };
  } catch (error) {
    stopGroup(dev);
    throw new Error(`npm run dev did not come up: ${(error as Error).message}\n${lines.join("\n")}`);
  }
}

/**
 * Removes the copy in a detached `rm -rf` and returns at once. The copy holds a whole `npm install` (1.4 GB,
 * ~55,000 files): rmSync took 12.7 s at load average 8, and in the global setup's teardown it blocked vitest's
 * main thread, so every whole `npm test` ended in "[vitest-pool]: Timeout terminating … worker", then "close
 * timed out after 10000ms … something prevents 7 Vite servers from exiting" and a forced exit (the pool's
 * 10 s teardown timers fired while the removal held the thread).
 */
export function removeCopy(dir: string) {
  spawn("rm", ["-rf", "--", dir], { detached: true, stdio: "ignore" }).unref();
}
