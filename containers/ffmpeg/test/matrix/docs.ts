/**
 * Writes the media matrix's table from the JSON of one or more runs (run.ts writes it beside its table;
 * several when the files were split between runs with MATRIX_FILES): test-artifacts/matrix.md and the section
 * of docs/media-support.md between its `matrix:start` and `matrix:end` markers. `npm run test:matrix --
 * --docs` does the same after a whole run.
 *
 *   node containers/ffmpeg/test/matrix/docs.ts test-artifacts/matrix.json [more.json …]
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  fromJson,
  fromLog,
  matrixMarkdown,
  merged,
  type toJson,
  totalsLine,
  writeMatrixSection,
} from "./matrix.ts";
import { RECIPES } from "./recipes.ts";

const files = process.argv.slice(2);
if (files.length === 0) throw new Error("usage: docs.ts run.json [more.json …]");
const results = files.map((f) =>
  f.endsWith(".log")
    ? fromLog(readFileSync(f, "utf8"))
    : fromJson([JSON.parse(readFileSync(f, "utf8")) as ReturnType<typeof toJson>]),
);
const result = merged(results);
const seen = new Set([...result.rows.map((r) => r.file), ...result.unmade.map((u) => u.recipe.name)]);
const missing = RECIPES.filter((r) => !seen.has(r.name)).map((r) => r.name);
if (missing.length > 0) throw new Error(`not a whole matrix: no runs of ${missing.join(", ")}`);
const started = new Date().toISOString();
const root = path.join(import.meta.dirname, "../../../..");
writeFileSync(
  path.join(root, "test-artifacts/matrix.md"),
  `# Media matrix (${started})\n\n${matrixMarkdown(result)}`,
);
writeMatrixSection(path.join(root, "docs/media-support.md"), started, matrixMarkdown(result));
console.log(`totals: ${totalsLine(result)}`);
