import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig, defineProject } from "vitest/config";

/**
 * Worker tests run inside workerd with real local D1, Durable Objects, Queues and R2. The test-only bindings
 * below stand in for .dev.vars; the media engine (a real local process) is started by the global setup.
 */
// Quiets wrangler's "missing required secrets" warning; the test bindings below set the real values.
for (const name of ["ADMIN_TOKEN", "FILE_SIGNING_SECRET", "ENGINE_SECRET"])
  process.env[name] ??= "set-by-vitest-config";

const worker = defineProject({
  plugins: [
    cloudflareTest(async ({ inject }) => ({
      remoteBindings: false,
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: await readD1Migrations(path.join(import.meta.dirname, "migrations")),
          ADMIN_TOKEN: "test-admin-token",
          FILE_SIGNING_SECRET: "test-file-signing-secret",
          ENGINE_SECRET: inject("engineSecret"),
          ENGINE_URL: inject("engineUrl"),
          ALLOW_PRIVATE_SOURCES: "true",
        },
      },
    })),
  ],
  test: {
    name: "worker",
    include: ["test/**/*.test.ts"],
    exclude: ["test/node/**", "test/e2e/**", "test/browser/**"],
    globalSetup: ["./test/global-setup.ts"],
    setupFiles: ["./test/helpers/apply-migrations.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

const node = defineProject({
  test: {
    name: "node",
    environment: "node",
    include: ["test/node/**/*.test.ts"],
    testTimeout: 60_000,
  },
});

export default defineConfig({
  test: { projects: [worker, node] },
});
