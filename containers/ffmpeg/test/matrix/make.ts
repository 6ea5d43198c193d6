/**
 * Makes every file of the media matrix (recipes.ts) and its logo into MATRIX_CACHE with this machine's ffmpeg,
 * for a suite that reads them elsewhere with MATRIX_MADE_BY (files.ts): test:container's run inside the engine
 * image. Prints the cache folder and, last, the line to pass as MATRIX_MADE_BY. A recipe this ffmpeg cannot make
 * is named on stderr; the tests that need it fail with its reason.
 */
import { resolveBinaries } from "../../src/config.ts";
import { ensureFiles, ensureLogo, ffmpegVersion, MATRIX_CACHE } from "./files.ts";
import { RECIPES } from "./recipes.ts";

const bins = resolveBinaries(process.env);
const started = Date.now();
const [made] = await Promise.all([ensureFiles(bins, RECIPES), ensureLogo(bins)]);
for (const [name, result] of made) {
  if ("error" in result) console.error(`not made: ${name}: ${result.error.split("\n")[0]}`);
}
console.log(`matrix files: ${made.size} recipes in ${MATRIX_CACHE} (${Date.now() - started} ms)`);
console.log(await ffmpegVersion(bins));
