/**
 * The media matrix (issue 43): the corpus harness (../corpus/harness.ts: the engine in-process, every answer
 * judged by checks.ts from the decoded source by its own route) over the generated files of recipes.ts, with
 * the corpus table's runs (table.ts runsFor: windows at 30–60 % of each file) and a cover between two
 * keyframes. On top of checks.ts, what the matrix knows of each file: a format the service reads is never
 * "not supported", and a file it refuses gets its documented answer.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { resolveBinaries } from "../../src/config.ts";
import type { Answer, Verdict } from "../corpus/checks.ts";
import { describe, type Row, runCorpus, totals } from "../corpus/harness.ts";
import type { StreamsFacts } from "../corpus/measure.ts";
import { type Run, runsFor } from "../corpus/table.ts";
import { ensureFiles, ensureLogo, LOGO } from "./files.ts";
import { RECIPES, type Recipe } from "./recipes.ts";

const r3 = (s: number) => Math.round(s * 1000) / 1000;

/** table.ts's runs, and a cover at 45 % (between two keyframes: 1.35 s of 3 s, keyframes each second). */
export function matrixRuns(name: string, facts: StreamsFacts, duration: number): Run[] {
  const runs = runsFor(name, facts, duration);
  if (facts.video !== null && duration > 0) {
    runs.push({ op: "video.extract-cover", params: { time: r3(duration * 0.45) }, label: "cover 45%" });
  }
  return runs;
}

const byName = new Map(RECIPES.map((r) => [r.name, r]));

/** checks.ts's verdict, held to what the matrix documents per file. */
export function judge(file: string, _run: Run, answer: Answer, verdict: Verdict): Verdict {
  const recipe = byName.get(file);
  if (recipe === undefined) return verdict;
  const detail = `${answer.status} ${String(answer.result.code ?? "")}: ${String(answer.result.message ?? "")}`;
  if (recipe.refused !== undefined) {
    const { status, message } = recipe.refused;
    if (answer.status === status && message.test(String(answer.result.message ?? ""))) {
      return { kind: "ok-refused", detail };
    }
    if (verdict.kind === "error") return verdict;
    return { kind: "wrong", why: [`[refused] ${detail}; documented: ${status} ${String(message)}`] };
  }
  if (verdict.kind === "ok-refused" && /not a supported/.test(detail)) {
    return { kind: "wrong", why: [`[refused] ${detail}, but ${recipe.container} is read`] };
  }
  return verdict;
}

export interface MatrixResult {
  rows: Row[];
  /** Recipes ffmpeg could not make here, with its reason (listed, never skipped silently). */
  unmade: { recipe: Recipe; error: string }[];
}

/** Makes the files (cached) and runs every operation on them; `only`: these file names. */
export async function runMatrix(
  only?: readonly string[],
  onRow?: (row: Row) => void,
  pick?: (file: string, run: Run) => boolean,
): Promise<MatrixResult> {
  const bins = resolveBinaries(process.env);
  const recipes = RECIPES.filter((r) => only === undefined || only.includes(r.name));
  const [made, logo] = await Promise.all([ensureFiles(bins, recipes), ensureLogo(bins)]);
  const paths = new Map<string, string>([[LOGO, logo]]);
  const unmade: MatrixResult["unmade"] = [];
  for (const recipe of recipes) {
    const m = made.get(recipe.name)!;
    if ("file" in m) paths.set(recipe.name, m.file);
    else unmade.push({ recipe, error: m.error });
  }
  const files = recipes.map((r) => r.name).filter((n) => paths.has(n));
  const rows = await runCorpus(files, onRow, pick, {
    locate: (name) => paths.get(name) ?? null,
    runs: matrixRuns,
    judge,
  });
  return { rows, unmade };
}

/** A run's result as JSON (the rows, and the names of the recipes not made with ffmpeg's reason). */
export const toJson = (r: MatrixResult, started: string) => ({
  started,
  rows: r.rows,
  unmade: r.unmade.map((u) => ({ name: u.recipe.name, error: u.error })),
});

/** Results written by toJson, merged into one (runs of different files: `MATRIX_FILES`). */
export function fromJson(runs: readonly ReturnType<typeof toJson>[]): MatrixResult {
  const rows = runs.flatMap((r) => r.rows);
  const unmade = runs.flatMap((r) =>
    r.unmade.flatMap((u) => {
      const recipe = byName.get(u.name);
      return recipe === undefined ? [] : [{ recipe, error: u.error }];
    }),
  );
  return { rows, unmade };
}

/**
 * The rows a run printed (run.ts: one line per run, `describe`'s words), for a run stopped before it wrote
 * its JSON: verdicts as printed, params not (the table shows none for them).
 */
export function fromLog(text: string): MatrixResult {
  const rows: Row[] = [];
  const unmade: MatrixResult["unmade"] = [];
  for (const line of text.split("\n")) {
    const gone = /^not made here: ([^:]+): (.*)$/.exec(line);
    const made = gone === null ? null : byName.get(gone[1]!);
    if (gone !== null && made !== undefined && made !== null) unmade.push({ recipe: made, error: gone[2]! });
    const m = /^(\S+)\s+(.+?)\s{2,}(ok-refused|ok|WRONG|ERROR)(.*) \((\d+) ms\)$/.exec(line);
    if (m === null || !byName.has(m[1]!)) continue;
    const [, file, label, kind, rest, ms] = m as unknown as string[];
    const text = rest!.replace(/^[:\s]+/, "").replace(/^\((.*)\)$/, "$1");
    const verdict: Verdict =
      kind === "ok"
        ? { kind: "ok", notes: text === "" ? [] : [text] }
        : kind === "ok-refused"
          ? { kind: "ok-refused", detail: text }
          : kind === "WRONG"
            ? { kind: "wrong", why: [text] }
            : { kind: "error", detail: text };
    rows.push({ file: file!, label: label!, params: {}, verdict, ms: Number(ms) });
  }
  return { rows, unmade };
}

/** Results merged: a later run's row of a file and label replaces an earlier one's. */
export function merged(results: readonly MatrixResult[]): MatrixResult {
  const rows = new Map<string, Row>();
  for (const r of results) for (const row of r.rows) rows.set(`${row.file}\u0000${row.label}`, row);
  const unmade = new Map(results.flatMap((r) => r.unmade).map((u) => [u.recipe.name, u]));
  return { rows: [...rows.values()], unmade: [...unmade.values()] };
}

/** The totals issue 43 asks for: files, runs, exact, refused with the documented 4xx, wrong, 5xx. */
export function matrixTotals({ rows, unmade }: MatrixResult) {
  const t = totals(rows);
  return {
    files: new Set([...rows.map((r) => r.file), ...unmade.map((u) => u.recipe.name)]).size,
    unmade: unmade.length,
    runs: rows.length,
    exact: t.ok,
    refused: t["ok-refused"],
    wrong: t.wrong,
    // checks.ts counts a 5xx (and a harness failure) as "error".
    "5xx": t.error,
  };
}

export const totalsLine = (r: MatrixResult): string => {
  const t = matrixTotals(r);
  return `${t.files} files (${t.unmade} ffmpeg cannot make here), ${t.runs} runs: ${t.exact} exact, ${t.refused} refused with the documented 4xx, ${t.wrong} wrong, ${t["5xx"]} × 5xx`;
};

const LABELS = [
  "probe",
  "cover",
  "cover 45%",
  "trim",
  "trim fast",
  "wm logo",
  "audio.trim",
  "audio mp3",
  "audio original",
];
const SHORT: Record<Verdict["kind"], string> = { ok: "✓", "ok-refused": "4xx", wrong: "✗", error: "5xx" };

/**
 * The matrix as Markdown: one row per file, one column per operation (✓ exact, 4xx a documented refusal, ✗
 * wrong, 5xx, – not applicable), the files ffmpeg cannot make here, then every run that is not exact with
 * the checker's reason.
 */
export function matrixMarkdown(result: MatrixResult): string {
  const { rows, unmade } = result;
  const esc = (s: string) => s.replaceAll("|", "\\|");
  const cell = new Map(rows.map((r) => [`${r.file}\u0000${r.label}`, r]));
  const lines = [
    `| file | container | codecs | ${LABELS.join(" | ")} |`,
    `| --- | --- | --- | ${LABELS.map(() => ":-:").join(" | ")} |`,
  ];
  for (const recipe of RECIPES) {
    const gone = unmade.find((u) => u.recipe === recipe);
    if (!rows.some((r) => r.file === recipe.name) && gone === undefined) continue;
    const marks = LABELS.map((l) => {
      const r = cell.get(`${recipe.name}\u0000${l}`);
      return gone !== undefined ? "n/a" : r === undefined ? "–" : SHORT[r.verdict.kind];
    });
    lines.push(
      `| ${recipe.name} | ${esc(recipe.container)} | ${esc(recipe.codecs)} | ${marks.join(" | ")} |`,
    );
  }
  lines.push("", `Totals: ${totalsLine(result)}.`);
  if (unmade.length > 0) {
    lines.push("", "Not made by this ffmpeg (n/a above):", "");
    for (const u of unmade) lines.push(`- ${u.recipe.name}: ${esc(u.error.split("\n")[0] ?? "")}`);
  }
  const refused = rows.filter((r) => r.verdict.kind === "ok-refused");
  const bad = rows.filter((r) => r.verdict.kind === "wrong" || r.verdict.kind === "error");
  if (refused.length > 0) {
    lines.push("", "Refusals (the documented answers):", "");
    for (const r of refused) lines.push(`- ${r.file} ${r.label}: ${esc(describe(r.verdict))}`);
  }
  if (bad.length > 0) {
    lines.push("", "Wrong or 5xx:", "");
    for (const r of bad)
      lines.push(`- ${r.file} ${r.label} \`${JSON.stringify(r.params)}\`: ${esc(describe(r.verdict))}`);
  }
  return `${lines.join("\n")}\n`;
}

/** Replaces the docs section between the markers with the table. */
export function writeMatrixSection(docs: string, started: string, table: string): void {
  const text = readFileSync(docs, "utf8");
  const [start, end] = ["<!-- matrix:start -->", "<!-- matrix:end -->"];
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${docs} has no ${start} … ${end} section`);
  const day = started.slice(0, 10);
  const section = `${start}\n\nGenerated by \`npm run test:matrix -- --docs\` on ${day} (Debian's ffmpeg 5.1).\n\n${table}\n`;
  writeFileSync(docs, text.slice(0, a) + section + text.slice(b));
}
