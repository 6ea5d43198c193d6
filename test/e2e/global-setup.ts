import http from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import { freshCopy, installAndStart, removeCopy } from "./fresh-copy.ts";

/**
 * The end-to-end suite runs against the service started the way the README says, in a fresh copy of the
 * project: `npm install && npm run dev`. That takes minutes, so it runs in the background while the other
 * projects' tests run: the setup returns at once and serves the outcome on a loopback address, which the
 * e2e files ask for (test/e2e/service.ts) and wait on.
 */
export default async function setup(project: TestProject) {
  const dir = freshCopy();
  const port = 18_000 + Math.floor(Math.random() * 2000) * 2;
  const starting = installAndStart(dir, port);
  let outcome: { status: number; body: string } | undefined;
  starting.then(
    (service) => {
      const ready: E2eService = {
        dir,
        base: service.base,
        apiKey: service.apiKey,
        webhookSecret: service.webhookSecret,
      };
      outcome = { status: 200, body: JSON.stringify(ready) };
    },
    (error: Error) => {
      outcome = { status: 500, body: error.message };
    },
  );
  // 200 with the service, 500 with why it did not come up, 202 while it is still starting.
  const server = http.createServer((_, res) => {
    if (!outcome) return void res.writeHead(202).end();
    res.writeHead(outcome.status, { "Content-Type": "text/plain" }).end(outcome.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("e2eServiceUrl", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return async () => {
    await new Promise((resolve) => server.close(resolve));
    (await starting.catch(() => undefined))?.stop();
    removeCopy(dir);
  };
}

export type E2eService = { dir: string; base: string; apiKey: string; webhookSecret: string };

declare module "vitest" {
  export interface ProvidedContext {
    /** test/e2e/global-setup.ts: where the fresh copy's service is announced once it is up. */
    e2eServiceUrl: string;
  }
}
