/**
 * Summarises test timing reports for docs/performance.md "Test suite time":
 *   node scripts/node22.mjs test/support/file-times-summary.ts <report.json>…
 * Reads vitest's JSON reporter output (--reporter=json --outputFile=…) or test/support/file-times-reporter.ts
 * output. Prints the 20 slowest files and the per-project totals as Markdown tables.
 *
 * "slot" is the time a file held a worker: from the end of the file before it on the same slot (or from when
 * its own start when it is the first on its worker) to its own end, so it includes what no vitest duration counts (a workerd started per
 * file, a service started in beforeAll). "tests" is the sum of its tests' own durations.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

type File = { project: string; file: string; start: number; end: number; tests: number; testMs: number };

function projectOf(file: string) {
  if (file.startsWith("containers/ffmpeg/")) return "media-engine";
  if (file.startsWith("clients/typescript/")) return "client";
  for (const p of ["e2e", "browser", "scripts", "text"]) if (file.startsWith(`test/${p}/`)) return p;
  return "worker";
}

function read(report: string): { startedAt: number; endedAt: number; files: File[] } {
  const json = JSON.parse(readFileSync(report, "utf8"));
  if (Array.isArray(json.testResults)) {
    const files: File[] = json.testResults.map(
      (t: {
        name: string;
        startTime: number;
        endTime: number;
        assertionResults: { duration?: number }[];
      }) => {
        const file = t.name.replace(/^.*?\/(?=(test|containers|clients)\/)/, "");
        return {
          project: projectOf(file),
          file,
          start: t.startTime,
          end: t.endTime,
          tests: t.assertionResults.length,
          testMs: t.assertionResults.reduce((s, a) => s + (a.duration ?? 0), 0),
        };
      },
    );
    return { startedAt: json.startTime, endedAt: Math.max(...files.map((f) => f.end)), files };
  }
  return {
    startedAt: json.startedAt,
    endedAt: json.endedAt,
    files: json.files
      .filter((f: { endedAt?: number }) => f.endedAt)
      .map(
        (f: {
          project: string;
          file: string;
          startedAt?: number;
          queuedAt?: number;
          endedAt: number;
          tests: number;
          diagnostic?: { duration: number };
        }) => ({
          project: f.project,
          // vitest names a file relative to its project's root (containers/ffmpeg for media-engine).
          file: f.project === "media-engine" ? `containers/ffmpeg/${f.file}` : f.file,
          start: f.startedAt ?? f.queuedAt ?? f.endedAt,
          end: f.endedAt,
          tests: f.tests,
          testMs: f.diagnostic?.duration ?? 0,
        }),
      ),
  };
}

/** Assigns files to worker slots in order of start: each takes the slot that freed last before it began. */
function slotTimes(files: File[]) {
  const slots: number[] = [];
  const out = new Map<File, number>();
  for (const f of [...files].sort((a, b) => a.start - b.start)) {
    const free = slots
      .map((end, i) => ({ end, i }))
      .filter((s) => s.end <= f.start + 50)
      .sort((a, b) => b.end - a.end)[0];
    const from = free ? free.end : f.start;
    if (free) slots[free.i] = f.end;
    else slots.push(f.end);
    out.set(f, f.end - from);
  }
  return out;
}

const s = (ms: number) => (ms / 1000).toFixed(1);

for (const report of process.argv.slice(2)) {
  const { startedAt, endedAt, files } = read(report);
  const slot = slotTimes(files);
  console.log(
    `\n### ${path.basename(report)}: ${files.length} files, wall ${s(endedAt - startedAt)} s, ` +
      `${s(Math.min(...files.map((f) => f.start)) - startedAt)} s of it before the first file (global setups)\n`,
  );
  console.log("| # | file | project | tests | slot s | tests s |\n|---|---|---|---|---|---|");
  [...files]
    .sort((a, b) => slot.get(b)! - slot.get(a)!)
    .slice(0, 20)
    .forEach((f, i) => {
      console.log(
        `| ${i + 1} | ${f.file} | ${f.project} | ${f.tests} | ${s(slot.get(f)!)} | ${s(f.testMs)} |`,
      );
    });
  console.log(
    "\n| project | files | tests | first start s | last end s | span s | slot s | tests s |\n|---|---|---|---|---|---|---|---|",
  );
  const projects = [...new Set(files.map((f) => f.project))];
  for (const p of projects) {
    const of = files.filter((f) => f.project === p);
    const first = Math.min(...of.map((f) => f.start));
    const last = Math.max(...of.map((f) => f.end));
    const sum = (g: (f: File) => number) => of.reduce((t, f) => t + g(f), 0);
    console.log(
      `| ${p} | ${of.length} | ${sum((f) => f.tests)} | ${s(first - startedAt)} | ${s(last - startedAt)} | ${s(last - first)} | ${s(sum((f) => slot.get(f)!))} | ${s(sum((f) => f.testMs))} |`,
    );
  }
}
