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
    // Guards against a hang, not speed checks: two suites at once on 2 cores stretched a 20 s test past 60 s.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Three files at a time, each running real ffmpeg: the same count as the other projects of the root config's
    // group 1 (../../vitest.config.ts; vitest refuses two counts in one group), whose browser and e2e files
    // mostly wait on their services.
    maxWorkers: 3,
    // In npm test: with the other projects after the worker project (../../vitest.config.ts).
    sequence: { groupOrder: 1 },
  },
});
