import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { groupGone, stopGroup } from "../../scripts/lib/processes.ts";
import { startDev } from "../browser/dev.ts";

const root = path.resolve(import.meta.dirname, "../..");

/**
 * A state directory that `npm run dev` has seeded (17 font uploads through one local R2 binding, then the
 * migrations and the dev account: most of a start), made once per machine and kept in the temp directory under
 * the hash of the migrations, wrangler.toml and scripts/dev.ts, like the engine's media fixtures.
 * A service started on a copy of it finds nothing to put and starts at once; anything newer than the copy it
 * still puts or applies itself. Used by the browser project's global setup and by `npm run test:uploads`
 * (which in `.ci/run` follows `npm test` on the same machine, so finds it made). `port` (and port + 1): where
 * the seeding `npm run dev` listens, when it must be made; random in 32000-33999 otherwise.
 */
export async function seededStateTemplate(port?: number): Promise<string> {
  const hash = createHash("sha256");
  const migrations = path.join(root, "migrations");
  for (const file of readdirSync(migrations, { recursive: true, encoding: "utf8" }).sort()) {
    const full = path.join(migrations, file);
    if (statSync(full).isFile()) hash.update(file).update(readFileSync(full));
  }
  hash.update(readFileSync(path.join(root, "wrangler.toml")));
  // How it is seeded: a change to npm run dev's seeding makes a new template.
  hash.update(readFileSync(path.join(root, "scripts/dev.ts")));
  const template = path.join(os.tmpdir(), `p6-browser-state-template-${hash.digest("hex").slice(0, 12)}`);
  // One builder per machine: two runs at once (two clones' npm test; test:container beside npm test run by
  // hand) want the same directory. The others wait for it; a lock left by a builder that was killed is taken over.
  const lock = `${template}.lock`;
  for (;;) {
    if (existsSync(template)) return template;
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const since = (() => {
      try {
        return Date.now() - statSync(lock).mtimeMs;
      } catch {
        return 0;
      }
    })();
    if (since > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const building = mkdtempSync(`${template}.building-`);
  try {
    if (existsSync(template)) return template;
    const { child } = await startDev(port ?? 32_000 + Math.floor(Math.random() * 1000) * 2, building);
    stopGroup(child);
    // The group outlives its leader while workerd finishes writing its state.
    await groupGone(child, 30_000);
    renameSync(building, template);
  } finally {
    rmSync(building, { recursive: true, force: true });
    rmSync(lock, { recursive: true, force: true });
  }
  return template;
}

/** Longer than a build has taken on a loaded machine (4-5 min). */
const STALE_LOCK_MS = 15 * 60_000;
