/**
 * A second media engine, in production mode (ALLOW_PRIVATE_SOURCES=false), whose DNS is a fixed table: the
 * public internet's names are outside the system, so a test resolver stands in for them (as in the engine's
 * fetcher.test.ts). Worker tests point ENGINE_URL here to check names that resolve to loopback, private
 * networks or cloud metadata (containers/ffmpeg/test/support/dns.ts).
 */
import { loadConfig } from "../../containers/ffmpeg/src/config.ts";
import { createEngineServer } from "../../containers/ffmpeg/src/server.ts";
import { tableResolver } from "../../containers/ffmpeg/test/support/dns.ts";

export async function startResolverEngine(secret: string) {
  const config = loadConfig({
    ...process.env,
    ENGINE_SECRET: secret,
    ALLOW_PRIVATE_SOURCES: "false",
    ENGINE_SLOTS: "1",
    ENGINE_QUEUE: "1",
    ENGINE_WARM_PROBES: "0",
    ENGINE_WARM_COMMANDS: "0",
    PORT: "0",
    HOST: "127.0.0.1",
  });
  const engine = await createEngineServer(config, {
    log: () => {},
    fetchPolicy: { resolve: tableResolver() },
  });
  const url = await engine.listen();
  return { url, close: () => engine.close() };
}
