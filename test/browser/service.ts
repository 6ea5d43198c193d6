import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
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
