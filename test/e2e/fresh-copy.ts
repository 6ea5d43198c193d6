import { execFile, execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { groupGone, portTaken, startGroup, stopGroup, waitForLine } from "../../scripts/lib/processes.ts";

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
  /** What `npm install` printed, stdout then stderr, line by line. */
  installOutput: string[];
  /** What `npm run dev` has printed so far, line by line (it goes on printing while the service runs). */
  devOutput: string[];
  stop: () => void;
};

/** A command to its end; its error says the exit code and what the command printed on stderr. */
const finish = promisify(execFile);

/**
 * PATH without the Node 22 that `npm run` put first (scripts/node22.mjs, `.tools/node`): the machine's own
 * Node, the one a newcomer's `npm install` runs on (on this machine Node 20, which is what makes npm print its
 * EBADENGINE warnings).
 */
export function machinePath(): string {
  return (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter((entry) => !entry.includes(`${path.sep}.tools${path.sep}node${path.sep}`))
    .join(path.delimiter);
}

const lines = (text: string) => text.split("\n").map((line) => line.trimEnd());

/**
 * The README's first command, `npm install && npm run dev`, in `dir`, with the machine's own Node; resolves
 * once the key is printed, with what both printed. `npm install` runs over a copy of this checkout's
 * node_modules (its caches left out), so it reconciles that tree with the copy's package-lock.json instead of
 * unpacking ~55,000 files again: 18 s of CPU for the copy and 2 s for the install, against 79 s for an install
 * from nothing (docs/performance.md, session 21). An install from nothing is what `.ci/run` does, on its fresh
 * clone, before it runs `npm test`. `.tools/node` (the Node 22 scripts/node22.mjs installs) is copied too, so
 * `npm run dev` does not download it again.
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
  // This checkout's, or the one the running Node came from (a worktree borrowing another checkout's).
  const tools = [
    path.join(root, ".tools/node"),
    process.execPath.split(`${path.sep}node_modules${path.sep}`)[0]!,
  ]
    .filter((candidate) => candidate.endsWith(`${path.sep}.tools${path.sep}node`))
    .find((candidate) => existsSync(candidate));
  if (tools !== undefined) {
    mkdirSync(path.join(dir, ".tools"));
    await finish("cp", ["-a", tools, path.join(dir, ".tools")]).catch(() => undefined);
  }
  const env = { ...process.env, PATH: machinePath() };
  // --no-audit: npm's audit summary depends on advisories published after the commit, not on the project.
  const install = await finish("npm", ["install", "--no-audit"], {
    cwd: dir,
    env,
    maxBuffer: 64 * 1024 * 1024,
  });
  const installOutput = [...lines(install.stdout), ...lines(install.stderr)];
  return startDevOn(dir, port, env, installOutput, 3);
}

/**
 * `npm run dev` on `port` (and the engine on `port + 1`). The port is picked at random on a machine others
 * share: when it (or the inspector's, PORT + 442) is taken, the next pair is tried, twice at most.
 */
async function startDevOn(
  dir: string,
  port: number,
  env: NodeJS.ProcessEnv,
  installOutput: string[],
  attempts: number,
): Promise<RunningService> {
  const devOutput: string[] = [];
  const pending: string[] = [];
  const dev = startGroup("fresh-dev", "npm", ["run", "dev"], {
    cwd: dir,
    env: { ...env, PORT: String(port), ENGINE_PORT: String(port + 1) },
    onLine: (line) => {
      devOutput.push(line);
      pending.push(line);
    },
    quiet: true,
  });
  try {
    // As generous as the browser tests: on a loaded machine a first start (17 font uploads, migrations) took 4-5 min.
    const [, apiKey] = await waitForLine(dev, pending, /API key:\s+(\S+)/, 480_000);
    const [, webhookSecret] = await waitForLine(dev, pending, /Webhook secret:\s+(\S+)/, 5_000);
    return {
      dir,
      base: `http://127.0.0.1:${port}`,
      apiKey: apiKey!,
      webhookSecret: webhookSecret!,
      installOutput,
      devOutput,
      stop: () => stopGroup(dev),
    };
  } catch (error) {
    stopGroup(dev);
    if (attempts > 1 && portTaken(devOutput)) {
      await groupGone(dev, 30_000);
      return startDevOn(dir, port + 2, env, installOutput, attempts - 1);
    }
    throw new Error(`npm run dev did not come up: ${(error as Error).message}\n${devOutput.join("\n")}`);
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
