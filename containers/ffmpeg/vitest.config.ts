import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  test: {
    name: "media-engine",
    root: here("."),
    environment: "node",
    include: ["test/**/*.test.ts"],
    globalSetup: [here("./test/support/global-setup.ts")],
    setupFiles: [here("./test/support/setup.ts")],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Three files at a time, each running real ffmpeg: the same count as the other projects of the root config's
    // group 1 (../../vitest.config.ts; vitest refuses two counts in one group), whose browser and e2e files
    // mostly wait on their services.
    maxWorkers: 3,
    // In npm test: with the other projects after the worker project (../../vitest.config.ts).
    sequence: { groupOrder: 1 },
  },
});
