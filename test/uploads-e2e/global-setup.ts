import type { TestProject } from "vitest/node";
import { startService, unlimitedKey } from "../../bench/lib/service.ts";
import { seededStateTemplate } from "../support/seeded-state.ts";

/**
 * `npm run test:uploads`: one `npm run dev` for every file (a start is minutes on a loaded machine), on its own
 * ports and state (bench/lib/service.ts), and a key without a practical rate limit. PORT chooses the ports
 * (PORT for the Worker, PORT + 1 the engine, PORT + 2 the inspector, PORT + 4 the seeding start, when the
 * seeded state is not made yet); without it they are picked at random in 34000-35999, beside the browser
 * tests' ranges, so two runs on a shared machine do not meet.
 */
export default async function setup(project: TestProject) {
  const port = Number(process.env.PORT) || 34_000 + Math.floor(Math.random() * 1000) * 2;
  // A loaded machine has taken more than 5 min to bring `npm run dev` up with a fresh state; on a copy of the
  // seeded one (made once per machine, by npm test's browser project in .ci/run) it has no fonts to put.
  const service = await startService({
    port,
    enginePort: port + 1,
    ...(process.env.PORT ? { inspectorPort: port + 2 } : {}),
    readyTimeoutMs: 900_000,
    stateTemplate: await seededStateTemplate(process.env.PORT ? port + 4 : undefined),
  });
  project.provide("uploadsBase", service.base);
  project.provide("uploadsKey", await unlimitedKey(service));
  return () => service.stop();
}

declare module "vitest" {
  export interface ProvidedContext {
    /** test:uploads: the `npm run dev` under test, and a key of its dev account. */
    uploadsBase: string;
    uploadsKey: string;
  }
}
