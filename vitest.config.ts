import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig, defineProject } from "vitest/config";

/**
 * Scheduling (docs/performance.md "Test suite time"): vitest runs one group after another, and on a 2-core
 * machine its default is one file at a time. The worker project is group 0 (two workerd, each taking the next
 * file); every other project is group 1, three files at a time across projects (the same count as
 * containers/ffmpeg/vitest.config.ts: vitest refuses two counts in one group): with two, the browser and e2e
 * files, which mostly wait on their services, left the cores idle. The e2e service installs and starts in the
 * background meanwhile (test/e2e/global-setup.ts).
 */
const AFTER_WORKER = { maxWorkers: 3, sequence: { groupOrder: 1 } };

/**
 * Worker tests run inside workerd with real local D1, Durable Objects, Queues and R2. The test-only bindings
 * below stand in for .dev.vars; the media engine (a real local process) is started by the global setup.
 */

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
          DOH_URL: inject("dohUrl"),
          ALLOW_PRIVATE_SOURCES: "true",
          // Console mail lands in the local mailbox (src/mail/mailbox.ts), where the tests read it.
          MAIL_TRANSPORT: "mailbox",
          // Mail links point here whatever Host a request names (test/helpers/api.ts's BASE).
          PUBLIC_ORIGIN: "http://api.test",
          // Held at sign-up and granted at verification (src/users/verification.ts), as npm run dev grants them.
          SIGNUP_CREDITS: "100",
          WEBHOOK_RETRY_DELAYS_SECONDS: "0,1,1,1,1",
          // Tests share one account across concurrent calls; the capacity tests set a small share themselves.
          ENGINE_ACCOUNT_MAX_SLOTS: "16",
          // The uploads property test (test/uploads/lossless.test.ts): more plans, another seed, from the shell.
          UPLOAD_PROPERTY_RUNS: process.env.UPLOAD_PROPERTY_RUNS ?? "",
          UPLOAD_PROPERTY_SEED: process.env.UPLOAD_PROPERTY_SEED ?? "",
        },
      },
    })),
  ],
  test: {
    name: "worker",
    include: ["test/**/*.test.ts"],
    exclude: ["test/e2e/**", "test/browser/**", "test/scripts/**", "test/uploads-e2e/**"],
    // The fonts server puts the R2 fonts (CJK) within reach of the image tests' FONTS bucket.
    globalSetup: ["./test/global-setup.ts", "./test/text/fonts-server.ts"],
    // Per file: the migrations, and the check of every answer the file's tests received against the OpenAPI
    // documents (test/helpers/answers.ts).
    setupFiles: ["./test/helpers/apply-migrations.ts", "./test/helpers/answers-setup.ts"],
    // Two workerd, each running files one after another (docs/performance.md "Test suite time"): a workerd per
    // file cost ~8 s each (56 files), and one alone kept one core busy. Each file makes its own accounts, keys
    // and tasks; D1 and the Durable Objects carry over between the files of one workerd. The files that
    // saturate an engine on purpose each have their own (test/global-setup.ts, smallEngines).
    isolate: false,
    maxWorkers: 2,
    sequence: { groupOrder: 0 },
    // Above waitForTask's 50 s: in CI, beside test:container's image build, a task once took over 30 s.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

/** End to end: the service started as the README says, in a fresh copy of the project (see test/e2e). */
const e2e = defineProject({
  test: {
    name: "e2e",
    environment: "node",
    ...AFTER_WORKER,
    include: ["test/e2e/**/*.test.ts"],
    globalSetup: ["./test/e2e/global-setup.ts"],
    // A guard against a hang: the generated client's run against the live service passed 120 s once with two
    // suites at once on 2 cores.
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});

/** The operator scripts (npm run deploy …) as Node processes, against stand-ins for what lies outside. */
const scripts = defineProject({
  test: {
    name: "scripts",
    environment: "node",
    ...AFTER_WORKER,
    include: ["test/scripts/**/*.test.ts"],
    // `npm run test:bench-smoke` (vitest.bench-smoke.config.ts; in .ci/run): the benches, not the product.
    exclude: ["test/scripts/bench-smoke.test.ts"],
    // A guard against a hang: a deploy test spawns ~40 processes (the wrangler stand-in, once per call), 6-8 s on
    // a quiet machine and up to 89 s of the former 120 s with two clones' `npm test` at once (issue 42).
    testTimeout: 300_000,
  },
});

/**
 * The dashboard in headless Chromium (Debian's package at /usr/bin/chromium, driven by playwright-core) against
 * the service started like `npm run dev`; the suite skips itself when Chromium is not installed.
 */
const browser = defineProject({
  test: {
    name: "browser",
    environment: "node",
    ...AFTER_WORKER,
    include: ["test/browser/**/*.test.ts"],
    // A seeded local state (fonts, migrations) made once per machine; each file's service starts on a copy.
    globalSetup: ["./test/browser/global-setup.ts"],
    testTimeout: 180_000,
    hookTimeout: 300_000,
  },
});

/** The TypeScript client (clients/typescript) on its own: Node, against loopback servers. */
const client = defineProject({
  test: {
    name: "client",
    environment: "node",
    ...AFTER_WORKER,
    include: ["clients/typescript/test/**/*.test.ts"],
    // The packed client's checks spawn tsc, npm and workerd: seconds each on a busy 2-core machine.
    testTimeout: 60_000,
  },
});

export default defineConfig({
  test: { projects: [worker, "./containers/ffmpeg/vitest.config.ts", e2e, browser, scripts, client] },
});
