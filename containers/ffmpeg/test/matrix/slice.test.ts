/**
 * `npm test`'s slice of the media matrix (matrix.ts; `npm run test:matrix` runs it all): one run of each
 * defect issue 43 found outside the corpus, on its generated file (cached by recipe), judged by the corpus
 * checker: an accurate trim and a cover between two keyframes of an MPEG-TS, an open-GOP HEVC trim, a
 * transport stream whose AAC stream has no packets, AIFF and CAF read, an init-only fragmented MP4 refused
 * with the documented 415.
 */
import { describe, expect, test } from "vitest";
import { describe as say } from "../corpus/harness.ts";
import { runMatrix } from "./matrix.ts";

const SLICE: Record<string, readonly string[]> = {
  "h264-aac.ts": ["trim", "cover 45%"],
  "hevc-aac.mp4": ["trim"],
  "empty-audio.ts": ["trim", "audio.trim"],
  "pcm24.aiff": ["audio.trim", "audio original"],
  "ima.caf": ["audio.trim"],
  "init-only.mp4": ["probe", "trim"],
};

describe("media matrix slice", () => {
  test("every answer is exact or the documented refusal", { timeout: 600_000 }, async () => {
    const { rows, unmade } = await runMatrix(Object.keys(SLICE), undefined, (file, run) =>
      (SLICE[file] ?? []).includes(run.label),
    );
    expect(unmade.map((u) => u.recipe.name)).toEqual([]);
    expect(rows.length).toBe(Object.values(SLICE).flat().length);
    const bad = rows
      .filter((r) => r.verdict.kind === "wrong" || r.verdict.kind === "error")
      .map((r) => `${r.file} ${r.label}: ${say(r.verdict)}`);
    expect(bad).toEqual([]);
  });
});
