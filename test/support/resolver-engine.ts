/**
 * A second media engine, in production mode (ALLOW_PRIVATE_SOURCES=false), whose DNS is a fixed table: the
 * public internet's names are outside the system, so a test resolver stands in for them (as in the engine's
 * fetcher.test.ts). Worker tests point ENGINE_URL here to check names that resolve to loopback, private
 * networks or cloud metadata.
 */
import { loadConfig } from "../../containers/ffmpeg/src/config.ts";
import type { ResolvedAddress } from "../../containers/ffmpeg/src/security/fetcher.ts";
import { createEngineServer } from "../../containers/ffmpeg/src/server.ts";

/** Names and what they resolve to; anything else does not resolve. */
export const TEST_DNS: Record<string, ResolvedAddress[]> = {
  "hooks.public.test": [{ address: "93.184.216.34", family: 4 }],
  "media.public.test": [{ address: "93.184.216.34", family: 4 }],
  "loopback.test": [{ address: "127.0.0.1", family: 4 }],
  "loopback6.test": [{ address: "::1", family: 6 }],
  "internal.test": [{ address: "10.0.0.7", family: 4 }],
  "metadata.test": [{ address: "169.254.169.254", family: 4 }],
  "unspecified.test": [{ address: "0.0.0.0", family: 4 }],
  "rebind.test": [
    { address: "93.184.216.34", family: 4 },
    { address: "127.0.0.1", family: 4 },
  ],
};

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
    fetchPolicy: {
      resolve: async (hostname) => {
        const answer = TEST_DNS[hostname];
        if (answer === undefined)
          throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
        return answer;
      },
    },
  });
  const url = await engine.listen();
  return { url, close: () => engine.close() };
}
