/**
 * The corpus harness: every applicable operation on every audio/video file of ../shared/corpus, run
 * through an engine started in-process (as the engine tests start it), each answer measured on its own
 * (checks.ts). Used by `npm run test:corpus` (run.ts, the whole corpus) and by subset.test.ts (`npm test`).
 */

import { createReadStream, existsSync } from "node:fs";
import { copyFile, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { type EngineConfig, resolveBinaries } from "../../src/config.ts";
import { createEngineServer } from "../../src/server.ts";
import { CORPUS_DIR } from "../support/corpus.ts";
import { textMarkFor } from "../support/text-mark.ts";
import {
  type Answer,
  answerVerdict,
  measureSource,
  refusalVerdict,
  type SourceInfo,
  TAGS,
  type Tag,
  type Verdict,
} from "./checks.ts";
import type { Bins } from "./measure.ts";
import { NOT_AV, type Run, runsFor } from "./table.ts";

export { CORPUS_DIR };

export const corpusPresent = (): boolean => existsSync(CORPUS_DIR);

/** Jobs at once: the machine's two cores, no more. */
const POOL = 2;
const SECRET = "corpus-secret";

export interface Row {
  file: string;
  label: string;
  params: Record<string, unknown>;
  verdict: Verdict;
  ms: number;
}

/** CORPUS_OPS=label,label limits the runs to those labels of the table (e.g. "wm logo,trim fast"). */
const onlyLabels = process.env.CORPUS_OPS?.split(",").map((s) => s.trim());
const wanted = (run: Run) => onlyLabels === undefined || onlyLabels.includes(run.label);

/** Audio/video files of the corpus (sorted), or `only` when given. */
export async function corpusFiles(only?: readonly string[]): Promise<string[]> {
  const names = (await readdir(CORPUS_DIR, { withFileTypes: true }))
    .filter((e) => e.isFile() && !e.name.startsWith(".") && !NOT_AV.test(e.name))
    .map((e) => e.name)
    .sort();
  return only === undefined ? names : names.filter((n) => only.includes(n));
}

/** Where a file of the run is on disk (by its name; `_logo/logo.png` is the watermark), null when unknown. */
export type Locate = (name: string) => string | null;

const inCorpus: Locate = (name) => {
  const file = path.join(CORPUS_DIR, path.normalize(name));
  return file.startsWith(CORPUS_DIR) ? file : null;
};

/** Serves the run's files (and the logo) read-only on 127.0.0.1. */
async function serveCorpus(locate: Locate): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    const name = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname.slice(1));
    const file = locate(name);
    const info = file !== null ? await stat(file).catch(() => null) : null;
    if (info === null || !info.isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-length": info.size, "content-type": "application/octet-stream" });
    createReadStream(file!).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function runOne(
  bins: Bins,
  engineUrl: string,
  corpusUrl: string,
  src: SourceInfo,
  run: Run,
  outDir: string,
  n: number,
  judge?: RunOptions["judge"],
): Promise<Row> {
  const t0 = Date.now();
  const row = { file: src.name, label: run.label, params: run.params };
  try {
    const answer = await callEngine(engineUrl, corpusUrl, src, run, outDir, n);
    const ms = Date.now() - t0;
    const checked =
      answer.status === 200 ? await answerVerdict(bins, src, run, answer) : refusalVerdict(src, run, answer);
    const verdict = judge === undefined ? checked : judge(src.name, run, answer, checked);
    // CORPUS_KEEP=<folder> keeps each produced file there (named by file and label) to look at.
    const keep = process.env.CORPUS_KEEP;
    if (answer.file !== null && keep !== undefined) {
      await copyFile(answer.file, path.join(keep, `${src.name} ${run.label}`.replace(/[^\w.+-]+/g, "_")));
    }
    if (answer.file !== null) await rm(answer.file, { force: true });
    return { ...row, verdict, ms };
  } catch (err) {
    return { ...row, verdict: { kind: "error", detail: `harness: ${String(err)}` }, ms: Date.now() - t0 };
  }
}

async function callEngine(
  engineUrl: string,
  corpusUrl: string,
  src: SourceInfo,
  run: Run,
  outDir: string,
  n: number,
): Promise<Answer> {
  const params = { ...run.params };
  if (params.watermark_url === "logo") params.watermark_url = `${corpusUrl}/_logo/logo.png`;
  const res = await fetch(`${engineUrl}/v1/jobs/${run.op}`, {
    method: "POST",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({
      job_id: `corpus-${n}`,
      source_url: `${corpusUrl}/${encodeURIComponent(src.name)}`,
      params,
      text_mark: textMarkFor(params),
      timeout_ms: 300_000,
    }),
  });
  const contentType = res.headers.get("content-type") ?? "";
  if (res.status !== 200 || contentType.startsWith("application/json")) {
    const result = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    return { status: res.status, result, contentType, file: null };
  }
  const file = path.join(outDir, `out-${n}`);
  await writeFile(file, Buffer.from(await res.arrayBuffer()));
  const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as Record<string, unknown>;
  return { status: res.status, result, contentType, file };
}

/** Where the files come from and which runs they get: the corpus and table.ts by default (the matrix: its own). */
export interface RunOptions {
  locate?: Locate;
  runs?: typeof runsFor;
  /** A verdict of the run's own on top of checks.ts's (the matrix: refusals it documents per file). */
  judge?: (file: string, run: Run, answer: Answer, verdict: Verdict) => Verdict;
}

/** Runs the table over `files`; `onRow` sees each row as it is done. */
export async function runCorpus(
  files: readonly string[],
  onRow: (row: Row) => void = () => {},
  pick: (file: string, run: Run) => boolean = () => true,
  options: RunOptions = {},
): Promise<Row[]> {
  const locate = options.locate ?? inCorpus;
  const runs = options.runs ?? runsFor;
  const bins = resolveBinaries(process.env);
  // CORPUS_ENGINE_FFMPEG_DIR: the engine runs that folder's ffmpeg/ffprobe (the image's build in .tools/ffmpeg/bin)
  // while every measurement of sources and answers stays on the ffmpeg resolved as usual (Debian's).
  const engineDir = process.env.CORPUS_ENGINE_FFMPEG_DIR;
  const engineBins = engineDir
    ? resolveBinaries({
        FFMPEG_PATH: path.join(engineDir, "ffmpeg"),
        FFPROBE_PATH: path.join(engineDir, "ffprobe"),
      })
    : bins;
  const tmpDir = await mkdtemp(path.join(os.tmpdir(), "p6-corpus-"));
  const config: EngineConfig = {
    secret: SECRET,
    host: "127.0.0.1",
    port: 0,
    allowPrivateSources: true,
    binaries: engineBins,
    slots: POOL,
    queue: 64,
    tmpDir: path.join(tmpDir, "engine"),
    connectTimeoutMs: 5000,
    readTimeoutMs: 30_000,
    x264Preset: "veryfast",
    downloadAheadBytes: 8 * 1024 * 1024,
    // The warm paths as the engine starts by default (config.ts: 3 probes, 2 commands), since a race there
    // is a 5xx users see; CORPUS_WARM=0 turns them off.
    warmProbes: process.env.CORPUS_WARM === "0" ? 0 : 3,
    warmCommands: process.env.CORPUS_WARM === "0" ? 0 : 2,
    minSourceBytesPerSecond: 64 * 1024,
    sourceRateWindowMs: 10_000,
  };
  // CORPUS_LOG=1 prints the engine's log (the internal side of failures: ffmpeg's stderr).
  const log = process.env.CORPUS_LOG === "1" ? (line: string) => console.error(line) : () => {};
  const engine = await createEngineServer(config, { log });
  const engineUrl = await engine.listen();
  const corpus = await serveCorpus(locate);
  const rows: Row[] = [];
  const record = (row: Row) => {
    rows.push(row);
    onRow(row);
  };
  try {
    // Each worker measures a file, then runs its table; two workers, two cores.
    let nextFile = 0;
    let n = 0;
    const worker = async () => {
      while (nextFile < files.length) {
        const name = files[nextFile++]!;
        const src = await measureSource(bins, name, locate(name)!);
        if (src === null) {
          const verdict: Verdict = { kind: "ok-refused", detail: "ffprobe cannot read it either: not run" };
          record({ file: name, label: "(source)", params: {}, verdict, ms: 0 });
          continue;
        }
        for (const run of runs(name, src.facts, src.duration).filter((r) => wanted(r) && pick(name, r))) {
          record(await runOne(bins, engineUrl, corpus.url, src, run, tmpDir, n++, options.judge));
        }
      }
    };
    await Promise.all(Array.from({ length: POOL }, worker));
  } finally {
    await corpus.close();
    await engine.close();
    await rm(tmpDir, { recursive: true, force: true });
  }
  return rows.sort((a, b) => a.file.localeCompare(b.file) || a.label.localeCompare(b.label));
}

export function totals(rows: readonly Row[]): Record<Verdict["kind"], number> {
  const t = { ok: 0, "ok-refused": 0, wrong: 0, error: 0 };
  for (const r of rows) t[r.verdict.kind]++;
  return t;
}

/** Wrong runs by the kind of fault (a run may count under several), and 5xx. */
export function tagTotals(rows: readonly Row[]): Partial<Record<Tag, number>> {
  const t: Partial<Record<Tag, number>> = {};
  for (const r of rows) {
    const tags =
      r.verdict.kind === "error"
        ? r.verdict.detail.startsWith("harness:")
          ? []
          : (["5xx"] as Tag[])
        : r.verdict.kind === "wrong"
          ? [...new Set(r.verdict.why.map((w) => /^\[([^\]]+)\]/.exec(w)?.[1] as Tag | undefined))]
          : [];
    for (const tag of tags) if (tag !== undefined && tag in TAGS) t[tag] = (t[tag] ?? 0) + 1;
  }
  return t;
}

export function describe(v: Verdict): string {
  switch (v.kind) {
    case "ok":
      return v.notes.length === 0 ? "ok" : `ok (${v.notes.join("; ")})`;
    case "ok-refused":
      return `ok-refused (${v.detail})`;
    case "wrong":
      return `WRONG: ${v.why.join("; ")}`;
    case "error":
      return `ERROR ${v.detail}`;
  }
}

/** The table as Markdown: file × operation → verdict, then the totals. */
export function markdown(rows: readonly Row[]): string {
  const esc = (s: string) => s.replaceAll("|", "\\|");
  const lines = [
    "| file | operation | params | result | ms |",
    "| --- | --- | --- | --- | ---: |",
    ...rows.map(
      (r) =>
        `| ${esc(r.file)} | ${esc(r.label)} | \`${esc(JSON.stringify(r.params))}\` | ${esc(describe(r.verdict))} | ${r.ms} |`,
    ),
  ];
  const t = totals(rows);
  lines.push(
    "",
    `Totals: ${rows.length} runs: ${t.ok} ok, ${t["ok-refused"]} ok-refused, ${t.wrong} wrong, ${t.error} error.`,
    "",
    "Wrong runs by kind (checks.ts TAGS; a run can show several):",
    "",
    ...Object.entries(tagTotals(rows)).map(([tag, n]) => `- \`${tag}\` (${TAGS[tag as Tag]}): ${n}`),
  );
  return `${lines.join("\n")}\n`;
}
