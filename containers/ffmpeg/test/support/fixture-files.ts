/**
 * Generated fixtures appear whole or not at all (issue 42). Generators of one folder run at once — the worker
 * and engine projects of one `npm test`, test files three at a time, two runs, two clones — and each skips a
 * file that already exists, so a file written in place is taken as finished (served, remuxed, cut) while ffmpeg
 * is still writing it ("moov atom not found"). Each fixture is therefore made under a name of its own in the
 * same folder (one filesystem, so the rename is atomic) and renamed into place; a reader sees the old file or
 * the new one, never a part. Two generators making the same file both rename: the same recipe, the same bytes.
 *
 * Written here rather than taken from write-file-atomic: that package writes bytes it is given, while most
 * fixtures are written by ffmpeg or sharp to a path whose extension picks the format (the partial name keeps it).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/** A name beside `file`, hidden, unique to this call, ending in `file`'s own name (so its extension). */
export function partialName(file: string): string {
  return path.join(path.dirname(file), `.partial-${randomBytes(6).toString("hex")}-${path.basename(file)}`);
}

/**
 * Makes `file` through `make(partial)` and renames the result into place. The partial, and any scratch file
 * `make` named after it (`${partial}.whole.mkv`), is removed either way.
 */
export async function publish(file: string, make: (partial: string) => Promise<unknown>): Promise<void> {
  const partial = partialName(file);
  try {
    await make(partial);
    await rename(partial, file);
  } finally {
    removeScratch(partial);
  }
}

/** publish for generators that run synchronously (execFileSync). */
export function publishSync(file: string, make: (partial: string) => unknown): void {
  const partial = partialName(file);
  try {
    make(partial);
    renameSync(partial, file);
  } finally {
    removeScratch(partial);
  }
}

function removeScratch(partial: string): void {
  const dir = path.dirname(partial);
  const name = path.basename(partial);
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith(name)) rmSync(path.join(dir, entry), { force: true, recursive: true });
  }
}

/** writeFile, atomically. */
export function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  return publish(file, (partial) => writeFile(partial, data));
}

/**
 * A folder under the temp directory named by the hash of the generators that fill it (their source files), so
 * a changed recipe makes a new folder and every run, file and clone with the same recipe shares the cache.
 */
export function recipeDir(prefix: string, recipes: readonly string[]): string {
  const hash = createHash("sha256");
  for (const recipe of recipes) hash.update(path.basename(recipe)).update(readFileSync(recipe));
  const dir = path.join(os.tmpdir(), `${prefix}-${hash.digest("hex").slice(0, 12)}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * The folder of generateFixtures' media, keyed by its sources (media.ts and the media-*.ts generators beside
 * it): the engine suite's, shared by the worker tests, the e2e tests and test:container.
 */
export function engineFixturesDir(): string {
  const support = import.meta.dirname;
  const recipes = readdirSync(support)
    .filter((name) => /^media(-[\w-]+)?\.ts$/.test(name))
    .sort()
    .map((name) => path.join(support, name));
  return recipeDir("p6-engine-fixtures", recipes);
}
