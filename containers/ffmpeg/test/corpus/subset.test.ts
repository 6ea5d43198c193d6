/**
 * The subset of the corpus run in `npm test` (table.ts SUBSET: a few runs of one file per codec/container):
 * every answer right by the independent checks (checks.ts) or a clear refusal. The known open defects
 * (table.ts KNOWN_WRONG, one reproduction per class of issue 29) are run as well, printed, and must still be
 * wrong: a fix that makes one right fails this test until its line is taken off the list. `npm run
 * test:corpus` runs the whole corpus. Skipped when ../shared/corpus is absent.
 */
import { describe, expect, test } from "vitest";
import { CORPUS_DIR, corpusFiles, corpusPresent, runCorpus, describe as say } from "./harness.ts";
import { inSubset, KNOWN_WRONG, subsetFiles } from "./table.ts";

describe.skipIf(!corpusPresent())(`corpus subset (${CORPUS_DIR})`, () => {
  test("every answer is right or a clear refusal; the known defects are still wrong", {
    timeout: 900_000,
  }, async () => {
    const rows = await runCorpus(await corpusFiles(subsetFiles()), undefined, (file, run) =>
      inSubset(file, run.label),
    );
    const key = (r: { file: string; label: string }) => `${r.file} ${r.label}`;
    const bad = rows.filter((r) => r.verdict.kind === "wrong" || r.verdict.kind === "error");
    const known = bad.filter((r) => KNOWN_WRONG[key(r)] !== undefined);
    if (known.length > 0) {
      console.log(
        `corpus subset: ${known.length} known open defects (table.ts KNOWN_WRONG), still wrong:\n` +
          known.map((r) => `  ${key(r)} (${KNOWN_WRONG[key(r)]}): ${say(r.verdict)}`).join("\n"),
      );
    }
    const unexpected = bad
      .filter((r) => KNOWN_WRONG[key(r)] === undefined)
      .map((r) => `${key(r)}: ${say(r.verdict)}`);
    const fixed = Object.keys(KNOWN_WRONG).filter((k) => !bad.some((r) => key(r) === k));
    expect(unexpected).toEqual([]);
    // A known defect that is right now: take it off KNOWN_WRONG.
    expect(fixed).toEqual([]);
  });
});
