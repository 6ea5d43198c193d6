import { defineConfig } from "vitest/config";

/**
 * `npm run test:uploads`: the tus upload "Must show" against `npm run dev` (test/uploads-e2e), published clients
 * nobody here wrote: tus-js-client at every chunk size from 1 KiB to 8 MiB + 1, aborted and resumed, a ≈ 300 MB
 * video cut and resumed with a task on it, and Python's tuspy (Debian's python3-tuspy) with sha1 checksums.
 * Every upload is read back and compared by sha256. Minutes long, so it is not one of `npm test`'s projects.
 * PORT picks the service's ports (test/uploads-e2e/global-setup.ts).
 */
export default defineConfig({
  test: {
    name: "uploads-e2e",
    environment: "node",
    include: ["test/uploads-e2e/**/*.test.ts"],
    globalSetup: ["./test/uploads-e2e/global-setup.ts"],
    testTimeout: 900_000,
    hookTimeout: 1_000_000,
    fileParallelism: false,
  },
});
