import path from "node:path";

/**
 * ../shared/corpus beside the repository (real-world media, read in place); CORPUS_DIR overrides it. One
 * definition for `npm run test:corpus` (corpus/harness.ts) and the tests that run a corpus file when present.
 */
export const CORPUS_DIR =
  process.env.CORPUS_DIR ?? path.resolve(import.meta.dirname, "../../../../../shared/corpus");
