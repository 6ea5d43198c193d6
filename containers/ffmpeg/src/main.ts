/** Engine entry point: read the environment, start the server, print the listening line, stop cleanly. */
import { type EngineConfig, loadConfig } from "./config.ts";
import { traceCommands, versionLine } from "./pipeline/ffmpeg.ts";
import { createEngineServer, type EngineServer } from "./server.ts";

let engine: EngineServer;
let url: string;
let config: EngineConfig;
try {
  config = loadConfig();
  if (process.env.ENGINE_TRACE_COMMANDS === "true") {
    traceCommands((bin, args) => console.log(`engine-command ${JSON.stringify({ bin, args })}`));
  }
  engine = await createEngineServer(config);
  url = await engine.listen();
} catch (err) {
  console.error(`engine failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
// Which ffmpeg runs every job, with its version (a machine may have another one than the tests verify).
for (const [name, bin] of [
  ["ffmpeg", config.binaries.ffmpeg],
  ["ffprobe", config.binaries.ffprobe],
] as const) {
  console.log(`engine ${name}: ${bin} (${(await versionLine(bin)) ?? "does not run"})`);
}
// The dev script and the test setup wait for exactly this line.
console.log(`engine listening on ${url}`);

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    engine.close().finally(() => process.exit(0));
  });
}
