/**
 * The engine suite's results out of a vitest JSON report (run.sh compares the host process's with the
 * container's). The report may hold every project of `npm test` (.ci/run passes that run's): only the files
 * under containers/ffmpeg/test/ count, the media-engine project's. Prints `passed failed skipped files` and
 * writes the passed tests' names (file relative to containers/ffmpeg, then the full name), sorted, to <list>.
 * Two things in names differ between the runs by nature and are normalised: a loopback fixture server's port
 * (`host:43189/` → `host:<port>/`) and the corpus directory in the corpus test's name (the host's path, the
 * container's /corpus).
 *   node suite-counts.ts <report.json> <list>
 */
import { readFileSync, writeFileSync } from "node:fs";

interface Report {
  testResults: {
    name: string;
    status: string;
    assertionResults: { fullName: string; status: string }[];
  }[];
}

function normalise(name: string): string {
  return name
    .replace(/:\d{2,5}\//g, ":<port>/")
    .replace(/^corpus subset \([^)]*\)/, "corpus subset (<corpus>)");
}

const [reportPath, listPath] = process.argv.slice(2);
if (!reportPath || !listPath) throw new Error("usage: node suite-counts.ts <report.json> <list>");
const report = JSON.parse(readFileSync(reportPath, "utf8")) as Report;
const marker = "/containers/ffmpeg/";
let passed = 0;
let failed = 0;
let skipped = 0;
let files = 0;
const names: string[] = [];
for (const file of report.testResults) {
  const at = file.name.indexOf(`${marker}test/`);
  if (at < 0) continue;
  files++;
  const relative = file.name.slice(at + marker.length);
  // A file that failed to load has no assertions: it counts as a failure of its own.
  if (file.status === "failed" && file.assertionResults.length === 0) failed++;
  for (const test of file.assertionResults) {
    if (test.status === "passed") {
      passed++;
      names.push(`${relative} > ${normalise(test.fullName)}`);
    } else if (test.status === "failed") failed++;
    else skipped++;
  }
}
writeFileSync(listPath, `${names.sort().join("\n")}\n`);
console.log(passed, failed, skipped, files);
