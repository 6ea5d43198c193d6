/**
 * The fast subset of the corpus run (one file per codec/container, table.ts FAST_SUBSET): every answer ok
 * or a clear refusal, but for the defects still listed in KNOWN_WRONG, which must still be wrong (a fixed one
 * is taken off the list). `npm run test:corpus` runs the whole corpus. Skipped when ../shared/corpus is absent.
 */
import { describe, expect, test } from "vitest";
import { CORPUS_DIR, corpusFiles, corpusPresent, runCorpus, describe as say } from "./harness.ts";
import { FAST_SUBSET, KNOWN_WRONG } from "./table.ts";

describe.skipIf(!corpusPresent())(`corpus subset (${CORPUS_DIR})`, () => {
  test("every answer is right or a clear refusal", { timeout: 900_000 }, async () => {
    const rows = await runCorpus(await corpusFiles(FAST_SUBSET));
    const bad = rows.filter((r) => r.verdict.kind === "wrong" || r.verdict.kind === "error");
    const unexpected = bad
      .filter((r) => KNOWN_WRONG[`${r.file} ${r.label}`] === undefined)
      .map((r) => `${r.file} ${r.label}: ${say(r.verdict)}`);
    const fixed = Object.keys(KNOWN_WRONG).filter(
      (key) => FAST_SUBSET.includes(key.split(" ")[0]!) && !bad.some((r) => `${r.file} ${r.label}` === key),
    );
    expect(unexpected).toEqual([]);
    expect(fixed).toEqual([]);
  });
});
