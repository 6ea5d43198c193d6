import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FixtureServer, startFixtureServer } from "./support/fixture-server.ts";

/**
 * The fixture server runs in vitest's main process for the whole run: a timer it leaves behind keeps that
 * process alive past the end ("close timed out after 10000ms … something prevents Vite servers from
 * exiting", then a forced exit 10 s later).
 */
describe("fixture server: a trickled download whose client hangs up", () => {
  let dir: string;
  let server: FixtureServer;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "p6-fixture-server-"));
    writeFileSync(path.join(dir, "one.bin"), Buffer.alloc(1024 * 1024, 7));
    server = await startFixtureServer(dir);
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;

  /** Starts a trickle and hangs up once its headers arrive, while the server is still reading its head. */
  const hangUpEarly = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.get(server.url("/ranged/one.bin?trickle=1"), (res) => {
        req.destroy();
        res.on("error", () => undefined);
        resolve();
      });
      req.on("error", (error) => (req.destroyed ? undefined : reject(error)));
    });

  it("leaves no timer behind once the client has gone, however early it hung up", async () => {
    const before = timers();
    for (let i = 0; i < 20; i++) await hangUpEarly();
    // A trickle sends 1 KiB every 500 ms: two periods are enough for any timer still running to show.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(timers()).toBeLessThanOrEqual(before);
  });
});
