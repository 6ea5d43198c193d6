import { cpSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startService } from "../../bench/lib/service.ts";
import { groupGone, stopGroup } from "../../scripts/lib/processes.ts";
import { startDev } from "../browser/dev.ts";
import { seededStateTemplate } from "../support/seeded-state.ts";

/**
 * The services the tests start pick their ports at random on a machine that other runs share, and try the
 * next ones when a port is taken. A taken engine port (ENGINE_PORT, PORT + 1) ended the media engine with
 * Node's "listen EADDRINUSE: address already in use", which the retry did not recognise (it looked for
 * wrangler's "Address already in use"): `npm run dev` exited and the test file failed before its first test
 * (issue 42: clients/typescript/test/uploads.test.ts, with two clones' `npm test` at once). Here another
 * process holds the engine port, and each starter must come up on the next pair.
 */

const blockers: net.Server[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  for (const server of blockers.splice(0)) await new Promise((r) => server.close(r));
});

/** Holds `port` on 127.0.0.1 as another process would, or resolves false when something already does. */
async function hold(port: number): Promise<boolean> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => {
      blockers.push(server);
      resolve(true);
    });
  });
}

/** A base port in 12000-13999, out of the other tests' ranges and below Linux's ephemeral ports, not taken. */
async function heldBase(): Promise<number> {
  for (;;) {
    const base = 12_000 + Math.floor(Math.random() * 125) * 16;
    if (await hold(base + 1)) return base;
  }
}

describe("a start whose engine port is taken moves on to the next ports", { timeout: 900_000 }, () => {
  it("bench/lib/service.ts startService (the benches, the client's and the uploads tests)", async () => {
    const base = await heldBase();
    const service = await startService({
      port: base,
      enginePort: base + 1,
      inspectorPort: base + 2,
      readyTimeoutMs: 480_000,
      stateTemplate: await seededStateTemplate(base + 8),
    });
    cleanups.push(() => service.stop());
    expect(service.ports).toEqual({ api: base + 2, engine: base + 3, inspector: base + 4 });
    const health = await fetch(`${service.base}/healthz`);
    expect(health.status).toBe(200);
  });

  it("test/browser/dev.ts startDev (the browser tests and the seeded state)", async () => {
    const base = await heldBase();
    const template = await seededStateTemplate(base + 8);
    const stateDir = mkdtempSync(path.join(os.tmpdir(), "p6-taken-ports-"));
    cpSync(template, stateDir, { recursive: true });
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));
    const previous = process.env.INSPECTOR_PORT;
    process.env.INSPECTOR_PORT = String(base + 10);
    cleanups.push(() => {
      if (previous === undefined) delete process.env.INSPECTOR_PORT;
      else process.env.INSPECTOR_PORT = previous;
    });
    const { child, port } = await startDev(base, stateDir);
    cleanups.push(async () => {
      stopGroup(child);
      if (!(await groupGone(child, 15_000))) stopGroup(child, "SIGKILL");
      await groupGone(child, 5_000);
    });
    expect(port).toBe(base + 2);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
  });
});
