import type { TestProject } from "vitest/node";

/** Runs in Node before the workerd tests: provides what the Worker under test needs to reach. */
export default async function setup(project: TestProject) {
  project.provide("engineSecret", "test-engine-secret");
  project.provide("engineUrl", "");
}

declare module "vitest" {
  export interface ProvidedContext {
    engineSecret: string;
    engineUrl: string;
  }
}
