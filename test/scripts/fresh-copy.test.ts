import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "vitest";
import { removeCopy } from "../e2e/fresh-copy.ts";

/**
 * The e2e global setup's teardown removes its fresh copy (a whole `npm install`) with removeCopy. Removed
 * synchronously, that held vitest's main thread for 12.7 s at the end of every `npm test`, long enough for the
 * pool's 10 s teardown timers to fire and the exit to be forced. removeCopy must return while the removal
 * still runs, and the copy must then go.
 */
test("removeCopy returns before the copy is gone, and the copy then goes", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "p6-remove-copy-"));
  for (let i = 0; i < 100; i++) {
    mkdirSync(path.join(dir, `d${i}`));
    for (let j = 0; j < 10; j++) writeFileSync(path.join(dir, `d${i}`, `f${j}`), "x");
  }
  removeCopy(dir);
  // Still there when removeCopy has returned: the 1,000 files were not removed on this thread.
  expect(existsSync(dir)).toBe(true);
  for (let i = 0; i < 1200 && existsSync(dir); i++) await new Promise((r) => setTimeout(r, 50));
  expect(existsSync(dir)).toBe(false);
});
