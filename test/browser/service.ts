import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readDevVars } from "../../scripts/lib/dev-vars.ts";
import { startGroup, stopGroup, waitForLine } from "../../scripts/lib/processes.ts";

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
  const lines: string[] = [];
  const log: string[] = [];
  const child = startGroup("dev", process.execPath, [path.join(root, "scripts/dev.ts")], {
    cwd: root,
    env: { PORT: String(port), ENGINE_PORT: String(port + 1), P6_STATE_DIR: stateDir },
    onLine: (line) => {
      lines.push(line);
      log.push(line);
    },
    quiet: true,
  });
  try {
    // Generous: on a loaded machine the first start (fonts into the local bucket, migrations) took 4-5 min.
    await waitForLine(child, lines, /Dev account (\S+)/, 480_000);
  } catch (error) {
    stopGroup(child);
    rmSync(stateDir, { recursive: true, force: true });
    throw new Error(`npm run dev did not come up: ${(error as Error).message}\n${log.join("\n")}`);
  }
  const wrangler = path.join(root, "node_modules/.bin/wrangler");
  const d1 = (command: string, json: boolean) =>
    execFileSync(
      wrangler,
      [
        "d1",
        "execute",
        "DB",
        "--local",
        "--persist-to",
        stateDir,
        "--command",
        command,
        ...(json ? ["--json"] : []),
      ],
      {
        cwd: root,
        encoding: "utf8",
        stdio: ["ignore", json ? "pipe" : "ignore", "ignore"],
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
      d1(command, false);
    },
    count: async (query) => {
      const [answer] = JSON.parse(d1(query, true)) as { results: Record<string, number>[] }[];
      return Number(Object.values(answer!.results[0]!)[0]);
    },
    stop: () => {
      stopGroup(child);
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
