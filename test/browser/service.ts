import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { inject } from "vitest";
import { readDevVars } from "../../scripts/lib/dev-vars.ts";
import { stopGroup } from "../../scripts/lib/processes.ts";
import { startDev } from "./dev.ts";

const root = path.resolve(import.meta.dirname, "../..");

export type RunningService = {
  base: string;
  adminToken: string;
  /** Runs SQL against the instance's local D1 (for rows no API creates yet). */
  sql: (command: string) => void;
  /** The single number a `SELECT count(*) …` answers, from the instance's local D1. */
  count: (query: string) => Promise<number>;
  stop: () => void;
};

/**
 * `npm run dev` on its own ports with fresh local state (like bench/lib/service.ts), so the browser tests never
 * touch a developer's running instance or data.
 */
export async function startService(port: number): Promise<RunningService> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), "p6-browser-state-"));
  // A copy of the seeded state (fonts in the local bucket, migrations, the dev account): `npm run dev` then
  // finds nothing to put and starts at once; anything newer than the copy it still puts or applies itself.
  let child: Awaited<ReturnType<typeof startDev>>["child"];
  try {
    cpSync(await stateTemplate(), stateDir, { recursive: true });
    // The port it came up on: startDev moves on when the one asked for is taken.
    ({ child, port } = await startDev(port, stateDir));
  } catch (error) {
    rmSync(stateDir, { recursive: true, force: true });
    throw error;
  }
  const wrangler = path.join(root, "node_modules/.bin/wrangler");
  const d1 = (command: string) =>
    execFileSync(
      wrangler,
      ["d1", "execute", "DB", "--local", "--persist-to", stateDir, "--command", command],
      {
        cwd: root,
        encoding: "utf8",
        stdio: "ignore",
        env: {
          ...process.env,
          WRANGLER_SEND_METRICS: "false",
          CLOUDFLARE_CF_FETCH_ENABLED: "false",
          CI: "1",
        },
      },
    );
  return {
    base: `http://127.0.0.1:${port}`,
    adminToken: readDevVars(path.join(root, ".dev.vars")).ADMIN_TOKEN!,
    sql: (command) => {
      d1(command);
    },
    // Read straight from the local D1's SQLite file (WAL: a reader beside workerd's writer sees what it has
    // committed), read-only: `wrangler d1 execute` started a wrangler and a workerd per count, seconds each.
    count: async (query) => {
      const db = new DatabaseSync(localD1File(stateDir), { readOnly: true });
      try {
        return Number(Object.values(db.prepare(query).get() ?? {})[0]);
      } finally {
        db.close();
      }
    },
    stop: () => {
      stopGroup(child);
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** The SQLite file of the one D1 database (wrangler.toml's DB) in a local state directory. */
function localD1File(stateDir: string) {
  const dir = path.join(stateDir, "v3/d1/miniflare-D1DatabaseObject");
  const files = readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  if (files.length !== 1)
    throw new Error(`expected one D1 database in ${dir}, found ${files.join(", ") || "none"}`);
  return path.join(dir, files[0]!);
}

/** The seeded state directory (test/browser/global-setup.ts), once it is made. */
async function stateTemplate(): Promise<string> {
  const url = inject("browserStateTemplateUrl");
  for (;;) {
    const response = await fetch(url);
    if (response.status === 200) return await response.text();
    if (response.status !== 202)
      throw new Error(`no seeded state for the browser tests: ${await response.text()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
