import { defineConfig } from "vitest/config";

/**
 * `npm run test:bench-smoke`: every bench entry point runs in its shortest mode (BENCH_SMOKE=1,
 * test/scripts/bench-smoke.test.ts). It checks the benches, not the product, and took ~4.5 min of `npm test`'s
 * tail (the scripts project runs last), so it is not one of `npm test`'s projects; `.ci/run` runs it.
 */
export default defineConfig({
  test: {
    name: "bench-smoke",
    environment: "node",
    // No testTimeout: the file gives each entry its own limit (up to 900 s).
    include: ["test/scripts/bench-smoke.test.ts"],
  },
});
