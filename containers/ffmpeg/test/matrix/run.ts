/**
 * `npm run test:matrix`: every file of the generated media matrix (recipes.ts) through every operation,
 * judged by the corpus checker (matrix.ts). Prints each run and the totals, writes the table to
 * test-artifacts/matrix.md (MATRIX_OUT: elsewhere). `MATRIX_FILES=a.ts,b.aiff` limits it to those files;
 * `CORPUS_OPS=label,…` to those operations. `npm run test:matrix -- --docs` also writes the table into
 * docs/media-support.md, between its `matrix:start` and `matrix:end` markers (a whole run only). Exits 1 when
 * any answer is wrong or a 5xx.
 */
import { writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { describe, type Row } from "../corpus/harness.ts";
import { MATRIX_CACHE } from "./files.ts";
import { matrixMarkdown, matrixTotals, runMatrix, toJson, totalsLine, writeMatrixSection } from "./matrix.ts";

const only = process.env.MATRIX_FILES?.split(",").map((s) => s.trim());
const out = path.resolve(
  process.env.MATRIX_OUT ?? path.join(import.meta.dirname, "../../../../test-artifacts/matrix.md"),
);
await mkdir(path.dirname(out), { recursive: true });
console.log(`matrix: files made by ffmpeg into ${MATRIX_CACHE} (cached by recipe)`);
const started = new Date().toISOString();
const done: Row[] = [];
const result = await runMatrix(only, (row) => {
  console.log(`${row.file.padEnd(24)} ${row.label.padEnd(16)} ${describe(row.verdict)} (${row.ms} ms)`);
  done.push(row);
  // The table so far, so that an interrupted run still leaves one.
  writeFileSync(
    out,
    `# Media matrix (${started}, ${done.length} runs so far)\n\n${matrixMarkdown({ rows: done, unmade: [] })}`,
  );
});
writeFileSync(out, `# Media matrix (${started})\n\n${matrixMarkdown(result)}`);
// The rows as JSON beside the table: docs.ts writes the docs section from one or more runs' files.
writeFileSync(out.replace(/\.md$/, ".json"), JSON.stringify(toJson(result, started)));
for (const u of result.unmade) console.log(`not made here: ${u.recipe.name}: ${u.error.split("\n")[0]}`);
console.log(`\ntotals: ${totalsLine(result)}\ntable: ${out}`);
if (process.argv.includes("--docs")) {
  if (only !== undefined || process.env.CORPUS_OPS !== undefined) {
    console.log("docs: not written (a partial run; docs.ts merges the JSON of runs that split the files)");
  } else {
    writeMatrixSection(
      path.join(import.meta.dirname, "../../../../docs/media-support.md"),
      started,
      matrixMarkdown(result),
    );
    console.log("docs: docs/media-support.md (its matrix section)");
  }
}
const t = matrixTotals(result);
process.exit(t.wrong + t["5xx"] > 0 ? 1 : 0);
