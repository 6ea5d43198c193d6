/**
 * Generates the test media once per machine (cached by the hash of its generators, each file written whole:
 * fixture-files.ts) and serves it from a 127.0.0.1 fixture server for the whole run.
 */
import type { TestProject } from "vitest/node";
import { useEngineFfmpeg } from "../../../../scripts/lib/engine-ffmpeg.ts";
import { resolveBinaries } from "../../src/config.ts";
import { engineFixturesDir } from "./fixture-files.ts";
import { startFixtureServer } from "./fixture-server.ts";
import { generateFixtures } from "./media.ts";

export default async function setup(project: TestProject) {
  const dir = engineFixturesDir();
  // ffmpeg 5.x, the version this suite verifies (PATH's, else Debian's installed when root; never the npm
  // builds on their own), printed and set in the environment the test workers inherit.
  useEngineFfmpeg("engine tests");
  const { ffmpeg } = resolveBinaries(process.env);
  await generateFixtures(ffmpeg, dir);
  const server = await startFixtureServer(dir);
  project.provide("fixtureDir", dir);
  project.provide("fixturePort", server.port);
  return () => server.close();
}

declare module "vitest" {
  export interface ProvidedContext {
    fixtureDir: string;
    fixturePort: number;
  }
}
