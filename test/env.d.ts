declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** test/uploads/lossless.test.ts: how many plans the property test runs, and from which seed. */
    UPLOAD_PROPERTY_RUNS: string;
    UPLOAD_PROPERTY_SEED: string;
  }
}
