/**
 * BENCH_SMOKE=1: every bench entry point in its shortest mode (tiny inputs, one iteration, seconds of load), so
 * test/scripts/bench-smoke.test.ts can prove each still runs. Its figures mean nothing.
 */
export const SMOKE = process.env.BENCH_SMOKE === "1";

/** `full` in a real run, `smoke` under BENCH_SMOKE=1. */
export const sized = <T>(full: T, smoke: T): T => (SMOKE ? smoke : full);

/**
 * The first of the ports a bench's own servers use (BENCH_PORT, default 8797): the service on it, its engine on
 * +1, the text bench's `wrangler dev` on +2, the upload bench's on +3, the Worker's inspector on +4. On a machine
 * shared with others, give each run a range of its own.
 */
export const BENCH_PORT = Number(process.env.BENCH_PORT ?? 8797);

/**
 * A seeded state directory (test/support/seeded-state.ts) the service starts as a copy of (BENCH_STATE_TEMPLATE):
 * the smoke test passes one so that `npm run dev` finds the fonts and migrations in place.
 */
export const STATE_TEMPLATE = process.env.BENCH_STATE_TEMPLATE || undefined;
