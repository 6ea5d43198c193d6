/**
 * `npm run test:corpus`: the whole corpus table (harness.ts), printed as it runs and written to
 * test-artifacts/corpus.md (CORPUS_OUT: elsewhere). `CORPUS_FILES=a.mp4,b.flac` limits the run to those files;
 * `CORPUS_ENGINE_FFMPEG_DIR=.tools/ffmpeg/bin` runs the engine on the image's ffmpeg build, measured with the
 * usual one. Exits 1 when any answer is wrong or an error.
 */
import { writeFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  CORPUS_DIR,
  corpusFiles,
  corpusPresent,
  describe,
  markdown,
  type Row,
  runCorpus,
  tagTotals,
  totals,
} from "./harness.ts";

if (!corpusPresent()) {
  console.log(`corpus: ${CORPUS_DIR} is absent; nothing to run (set CORPUS_DIR to a folder of media files)`);
  process.exit(0);
}
const only = process.env.CORPUS_FILES?.split(",").map((s) => s.trim());
const files = await corpusFiles(only);
console.log(`corpus: ${files.length} audio/video files from ${CORPUS_DIR}`);
if (process.env.CORPUS_ENGINE_FFMPEG_DIR)
  console.log(`corpus: the engine runs the ffmpeg/ffprobe of ${process.env.CORPUS_ENGINE_FFMPEG_DIR}`);
// CORPUS_OUT=<file> writes the table elsewhere (two runs over different files at once).
const out = path.resolve(
  process.env.CORPUS_OUT ?? path.join(import.meta.dirname, "../../../../test-artifacts/corpus.md"),
);
await mkdir(path.dirname(out), { recursive: true });
const started = new Date().toISOString();
const done: Row[] = [];
const rows = await runCorpus(files, (row) => {
  console.log(`${row.file.padEnd(28)} ${row.label.padEnd(22)} ${describe(row.verdict)} (${row.ms} ms)`);
  done.push(row);
  // The table so far, so that an interrupted run still leaves one.
  writeFileSync(out, `# Corpus run (${started}, ${done.length} runs so far)\n\n${markdown(done)}`);
});
await writeFile(out, `# Corpus run (${started})\n\n${markdown(rows)}`);
const t = totals(rows);
console.log(
  `\ntotals: ${rows.length} runs: ${t.ok} ok, ${t["ok-refused"]} ok-refused, ${t.wrong} wrong, ${t.error} error` +
    `\nwrong by kind: ${JSON.stringify(tagTotals(rows))}` +
    `\ntable: ${out}`,
);
process.exit(t.wrong + t.error > 0 ? 1 : 0);
