import http from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import { seededStateTemplate } from "../support/seeded-state.ts";

/**
 * The browser project's global setup: a state directory that `npm run dev` has seeded (seededStateTemplate in
 * test/support/seeded-state.ts: the fonts, the migrations and the dev account, made once per machine). Each
 * service starts on a copy of it (startService in service.ts). When it
 * has to be made, that happens in the background while other projects' tests run; its path is served on a
 * loopback address (202 while it is being made, 500 with the reason when that failed).
 */
export default async function setup(project: TestProject) {
  let outcome: { status: number; body: string } | undefined;
  seededStateTemplate().then(
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

declare module "vitest" {
  export interface ProvidedContext {
    /** test/browser/global-setup.ts: answers with the seeded state directory each service copies. */
    browserStateTemplateUrl: string;
  }
}
