import type { TestProject } from "vitest/node";
import { resolveBinaries } from "../containers/ffmpeg/src/config.ts";
import { startEngine } from "../containers/ffmpeg/src/launch.ts";
import { engineFixturesDir } from "../containers/ffmpeg/test/support/fixture-files.ts";
import { startFixtureServer } from "../containers/ffmpeg/test/support/fixture-server.ts";
import { generateFixtures } from "../containers/ffmpeg/test/support/media.ts";
import { useEngineFfmpeg } from "../scripts/lib/engine-ffmpeg.ts";
import { generateImageFixtures } from "./images/generate.ts";
import { startAnswerValidator } from "./support/answers.ts";
import { startDohServer } from "./support/doh-server.ts";
import { startInspector } from "./support/inspector.ts";
import { startResolverEngine } from "./support/resolver-engine.ts";
import { startWebhookReceiver } from "./support/webhook-receiver.ts";

const ENGINE_SECRET = "test-engine-secret";

/**
 * Runs in Node before the workerd tests. Real media generated with ffmpeg (cached per recipe), served from a
 * loopback server standing in for the public internet; the real media engine as a local process; an
 * ffprobe inspector for checking what the Worker produced; a webhook receiver recording every delivery; and a
 * DNS-over-HTTPS stand-in answering webhook names from a fixed table (test/support/doh-server.ts); and the answer
 * validator, which checks every answer the tests receive against the OpenAPI documents (test/support/answers.ts).
 */
export default async function setup(project: TestProject) {
  // The engine suite's folder, cached under the hash of its generators; the image inputs are written again on
  // every run. Each file is written whole (fixture-files.ts): other runs and clones share the folder.
  const dir = engineFixturesDir();
  // The ffmpeg the engine suite verifies (5.x), printed; set in the environment every engine below inherits.
  useEngineFfmpeg("worker tests");
  const binaries = resolveBinaries(process.env);
  await generateFixtures(binaries.ffmpeg, dir);
  await generateImageFixtures(binaries.ffmpeg, dir);
  const fixtures = await startFixtureServer(dir);
  const engine = await startEngine({
    ENGINE_SECRET,
    ALLOW_PRIVATE_SOURCES: "true",
    ENGINE_SLOTS: "2",
    ENGINE_QUEUE: "8",
  });
  const resolverEngine = await startResolverEngine(ENGINE_SECRET);
  // Small engines (one slot, no queue) that capacity tests saturate on purpose, each file its own, since the
  // project runs two files at a time: test/tasks/capacity.test.ts, test/engine/capacity.test.ts and two for
  // test/engine/scale-out.test.ts (smallEngines below).
  const small = await Promise.all(
    [1, 2, 3, 4].map(() =>
      startEngine({
        ENGINE_SECRET,
        ALLOW_PRIVATE_SOURCES: "true",
        ENGINE_SLOTS: "1",
        ENGINE_QUEUE: "0",
        ENGINE_WARM_PROBES: "0",
        ENGINE_WARM_COMMANDS: "0",
      }),
    ),
  );
  const inspector = await startInspector(binaries.ffprobe, binaries.ffmpeg);
  const webhookReceiver = await startWebhookReceiver();
  const doh = await startDohServer();
  const answers = await startAnswerValidator();

  project.provide("engineSecret", ENGINE_SECRET);
  project.provide("engineUrl", engine.url);
  project.provide("smallEngines", {
    tasksCapacity: small[0]!.url,
    engineCapacity: small[1]!.url,
    scaleOut: [small[2]!.url, small[3]!.url],
  });
  project.provide("mediaBase", `http://127.0.0.1:${fixtures.port}`);
  project.provide("resolverEngineUrl", resolverEngine.url);
  project.provide("inspectorUrl", inspector.url);
  project.provide("webhookReceiverUrl", webhookReceiver.url);
  project.provide("dohUrl", doh.url);
  project.provide("answersUrl", answers.url);
  // All at once: an engine waits up to 5 s for its jobs and connections to end before it exits, and one after
  // another they outlasted vitest's 10 s close timeout ("close timed out … something prevents Vite servers
  // from exiting", then a forced exit).
  return async () => {
    await Promise.all([
      engine.stop(),
      resolverEngine.close(),
      ...small.map((e) => e.stop()),
      fixtures.close(),
      inspector.close(),
      webhookReceiver.close(),
      doh.close(),
      answers.close(),
    ]);
  };
}
