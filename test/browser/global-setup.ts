import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { groupGone, stopGroup } from "../../scripts/lib/processes.ts";
import { startDev } from "./dev.ts";

const root = path.resolve(import.meta.dirname, "../..");

/**
 * The browser project's global setup: a state directory that `npm run dev` has seeded (17 font uploads, one
 * `wrangler r2 object put` and one workerd each, then the migrations and the dev account: most of a start),
 * made once per machine and kept in the temp directory under the hash of the migrations and wrangler.toml,
 * like the engine's media fixtures. Each service starts on a copy of it (startService in service.ts). When it
 * has to be made, that happens in the background while other projects' tests run; its path is served on a
 * loopback address (202 while it is being made, 500 with the reason when that failed).
 */
export default async function setup(project: TestProject) {
  let outcome: { status: number; body: string } | undefined;
  seededTemplate().then(
    (dir) => {
      outcome = { status: 200, body: dir };
    },
    (error: Error) => {
      outcome = { status: 500, body: error.message };
    },
  );
  const server = http.createServer((_, res) => {
    if (!outcome) return void res.writeHead(202).end();
    res.writeHead(outcome.status, { "Content-Type": "text/plain" }).end(outcome.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("browserStateTemplateUrl", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return () => new Promise((resolve) => server.close(resolve));
}

async function seededTemplate() {
  const hash = createHash("sha256");
  const migrations = path.join(root, "migrations");
  for (const file of readdirSync(migrations, { recursive: true, encoding: "utf8" }).sort()) {
    const full = path.join(migrations, file);
    if (statSync(full).isFile()) hash.update(file).update(readFileSync(full));
  }
  hash.update(readFileSync(path.join(root, "wrangler.toml")));
  const template = path.join(os.tmpdir(), `p6-browser-state-template-${hash.digest("hex").slice(0, 12)}`);
  if (existsSync(template)) return template;
  const building = mkdtempSync(`${template}.building-`);
  try {
    const { child } = await startDev(32_000 + Math.floor(Math.random() * 1000) * 2, building);
    stopGroup(child);
    // The group outlives its leader while workerd finishes writing its state.
    await groupGone(child, 30_000);
    if (!existsSync(template)) renameSync(building, template);
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return template;
}

declare module "vitest" {
  export interface ProvidedContext {
    /** test/browser/global-setup.ts: answers with the seeded state directory each service copies. */
    browserStateTemplateUrl: string;
  }
}
