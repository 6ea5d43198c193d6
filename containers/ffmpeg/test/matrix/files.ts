/**
 * The matrix's files, made by ffmpeg at test time (recipes.ts) into a cache under the system temp folder: each
 * file in a folder named by the hash of its recipe and of the ffmpeg that makes it, written under a temporary
 * name and renamed into place when whole (issue 42), so parallel runs, repeated runs and other clones never
 * read a half-made file, and a changed recipe makes a new file.
 *
 * MATRIX_MADE_BY names the ffmpeg that made the files in MATRIX_CACHE beforehand (the first line of its
 * `-version`): they are then looked up as that ffmpeg made them and never made here. test:container uses it:
 * the engine's own build (build-ffmpeg.sh) leaves out encoders the matrix's recipes use (x265, Theora), which
 * the engine only has to decode, so the host's Debian ffmpeg makes the files (make.ts) and the suite inside the
 * image reads them from a read-only mount.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { Bins } from "../corpus/measure.ts";
import { type Recipe, SOURCE } from "./recipes.ts";

const exec = promisify(execFile);

/** MATRIX_CACHE overrides the cache folder. */
export const MATRIX_CACHE = process.env.MATRIX_CACHE ?? path.join(os.tmpdir(), "p6-matrix");

/** The watermark every `wm logo` run draws, served as `_logo/logo.png` like the corpus's. */
export const LOGO = "_logo/logo.png";

const { width, height, fps, seconds } = SOURCE;

/** The synthetic inputs: a moving pattern, and a chirp (no stretch of it repeats, so its place is found). */
function inputArgs(recipe: Recipe): string[] {
  const { rate, channels } = recipe.audio ?? { rate: 48_000, channels: 2 };
  const chirp = ["0.4*sin(2*PI*(220*t+400*t*t))", "0.3*sin(2*PI*(330*t+300*t*t))"].slice(0, channels);
  const video = ["-f", "lavfi", "-i", `testsrc2=size=${width}x${height}:rate=${fps}:duration=${seconds}`];
  const audio = ["-f", "lavfi", "-i", `aevalsrc=${chirp.join("|")}:s=${rate}:d=${seconds}`];
  const inputs = recipe.inputs ?? "av";
  return inputs === "video" ? video : inputs === "audio" ? audio : [...video, ...audio];
}

/** The ffmpeg that made the cache's files, when not the one under test (see above). */
const MADE_BY = process.env.MATRIX_MADE_BY || undefined;

let version: Promise<string> | null = null;
/** The first line of `ffmpeg -version` of the ffmpeg that makes the files: part of each file's cache key. */
export const ffmpegVersion = (bins: Bins) => {
  version ??=
    MADE_BY !== undefined
      ? Promise.resolve(MADE_BY)
      : exec(bins.ffmpeg, ["-version"]).then((r) => r.stdout.split("\n")[0] ?? "");
  return version;
};

const notMadeHere = (name: string) =>
  `${name} is not among the files ${MADE_BY} made beforehand (MATRIX_MADE_BY)`;

/** The command that makes a recipe's file at `out`. */
const commandOf = (recipe: Recipe, out: string): string[] => [
  ...["-hide_banner", "-loglevel", "error", "-y", ...inputArgs(recipe)],
  ...[...recipe.args, "-threads", "1", out],
];

/** Where a recipe's file is (made or not). */
export async function matrixPath(bins: Bins, recipe: Recipe): Promise<string> {
  const hash = createHash("sha256")
    .update(JSON.stringify([await ffmpegVersion(bins), SOURCE, commandOf(recipe, recipe.name)]))
    .digest("hex")
    .slice(0, 16);
  return path.join(MATRIX_CACHE, hash, recipe.name);
}

/** Makes `recipe`'s file when the cache lacks it; its path, or the reason ffmpeg could not make it. */
export async function ensureFile(bins: Bins, recipe: Recipe): Promise<{ file: string } | { error: string }> {
  const file = await matrixPath(bins, recipe);
  if (existsSync(file)) return { file };
  if (MADE_BY !== undefined) return { error: notMadeHere(recipe.name) };
  await mkdir(path.dirname(file), { recursive: true });
  // Same folder, unique name, same extension (muxers are chosen by it): renamed into place when whole.
  const part = path.join(path.dirname(file), `.${process.pid}-${Date.now()}-${recipe.name}`);
  try {
    await exec(bins.ffmpeg, commandOf(recipe, part), { timeout: 120_000 });
    await rename(part, file);
    return { file };
  } catch (err) {
    await rm(part, { force: true });
    const stderr = (err as { stderr?: string }).stderr?.trim();
    return { error: stderr || String(err) };
  }
}

/** The logo (a small PNG with transparency), made once like the files. */
export async function ensureLogo(bins: Bins): Promise<string> {
  const file = path.join(MATRIX_CACHE, LOGO);
  if (existsSync(file)) return file;
  if (MADE_BY !== undefined) throw new Error(notMadeHere(LOGO));
  await mkdir(path.dirname(file), { recursive: true });
  const part = path.join(path.dirname(file), `.${process.pid}-${Date.now()}-logo.png`);
  await exec(bins.ffmpeg, [
    ...[
      "-hide_banner",
      "-loglevel",
      "error",
      "-y",
      "-f",
      "lavfi",
      "-i",
      "color=c=red@0.6:s=32x16,format=rgba",
    ],
    ...["-frames:v", "1", part],
  ]);
  await rename(part, file);
  return file;
}

/** Makes every recipe's file, two at a time (the machine's cores). */
export async function ensureFiles(
  bins: Bins,
  recipes: readonly Recipe[],
): Promise<Map<string, { file: string } | { error: string }>> {
  const made = new Map<string, { file: string } | { error: string }>();
  let next = 0;
  const worker = async () => {
    while (next < recipes.length) {
      const recipe = recipes[next++]!;
      made.set(recipe.name, await ensureFile(bins, recipe));
    }
  };
  await Promise.all([worker(), worker()]);
  return made;
}
