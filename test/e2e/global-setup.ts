import type { TestProject } from "vitest/node";
import { freshCopy, installAndStart, removeCopy } from "./fresh-copy.ts";

/**
 * The end-to-end suite runs against the service started the way the README says, in a fresh copy of the
 * project: `npm install && npm run dev`.
 */
export default async function setup(project: TestProject) {
  const dir = freshCopy();
  const port = 18_000 + Math.floor(Math.random() * 2000) * 2;
  const service = await installAndStart(dir, port);
  project.provide("e2e", {
    dir,
    base: service.base,
    apiKey: service.apiKey,
    webhookSecret: service.webhookSecret,
  });
  return () => {
    service.stop();
    removeCopy(dir);
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    e2e: { dir: string; base: string; apiKey: string; webhookSecret: string };
  }
}
