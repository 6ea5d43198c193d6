import { defineConfig } from "vitest/config";

/**
 * `npm run test:uploads`: the tus upload "Must show" against `npm run dev` (test/uploads-e2e): a ≈ 300 MB video
 * generated once into the temp dir, an interrupted and resumed tus-js-client upload, a task on it. Minutes
 * long, so it is not one of `npm test`'s projects.
 */
export default defineConfig({
  test: {
    name: "uploads-e2e",
    environment: "node",
    include: ["test/uploads-e2e/**/*.test.ts"],
    testTimeout: 900_000,
    hookTimeout: 1_000_000,
    fileParallelism: false,
  },
});
