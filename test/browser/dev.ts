import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { groupGone, portTaken, startGroup, stopGroup, waitForLine } from "../../scripts/lib/processes.ts";

const root = path.resolve(import.meta.dirname, "../..");

/**
 * `npm run dev` on `port` and `port + 1` with its state in `stateDir`, once it has printed the dev account.
 * The ports are picked at random on a machine others share: when wrangler or the engine finds its port taken,
 * the next pair is tried (twice at most). Resolves with the process group and the port it listens on.
 */
export async function startDev(
  port: number,
  stateDir: string,
  attempts = 3,
): Promise<{ child: ChildProcess; port: number }> {
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
    return { child, port };
  } catch (error) {
    stopGroup(child);
    if (attempts > 1 && portTaken(log)) {
      await groupGone(child, 30_000);
      return startDev(port + 2, stateDir, attempts - 1);
    }
    throw new Error(`npm run dev did not come up: ${(error as Error).message}\n${log.join("\n")}`);
  }
}
