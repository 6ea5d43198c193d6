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
  // Random, on a machine others share (installAndStart tries the next pair when it is taken), or P6_E2E_PORT:
  // the API on it, the engine on the next (and the inspector on PORT + 442, or INSPECTOR_PORT).
  const port = Number(process.env.P6_E2E_PORT) || 18_000 + Math.floor(Math.random() * 2000) * 2;
  const starting = installAndStart(dir, port);
  let outcome: { status: number; body: string } | undefined;
  let devOutput: string[] = [];
  starting.then(
    (service) => {
      const ready: E2eService = {
        dir,
        base: service.base,
        apiKey: service.apiKey,
        webhookSecret: service.webhookSecret,
        installOutput: service.installOutput,
      };
      devOutput = service.devOutput;
      outcome = { status: 200, body: JSON.stringify(ready) };
    },
    (error: Error) => {
      outcome = { status: 500, body: error.message };
    },
  );
  // 200 with the service, 500 with why it did not come up, 202 while it is still starting; /dev-output: what
  // its `npm run dev` has printed so far.
  const server = http.createServer((req, res) => {
    if (req.url === "/dev-output") {
      return void res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(devOutput));
    }
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

export type E2eService = {
  dir: string;
  base: string;
  apiKey: string;
  webhookSecret: string;
  /** What the README's `npm install` printed in the fresh copy. */
  installOutput: string[];
};

declare module "vitest" {
  export interface ProvidedContext {
    /** test/e2e/global-setup.ts: where the fresh copy's service is announced once it is up. */
    e2eServiceUrl: string;
  }
}
