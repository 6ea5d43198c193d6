/** What the engine's routes share, built once by createEngineServer (server.ts). */
import type { HttpBindings } from "@hono/node-server";
import type { EngineConfig } from "./config.ts";
import type { JobRegistry } from "./jobs.ts";
import type { Relay } from "./pipeline/relay.ts";
import type { WarmCommands } from "./pipeline/warm-ffmpeg.ts";
import type { WarmProbes } from "./pipeline/warm-probe.ts";
import type { Pool } from "./pool.ts";
import type { FetchPolicy } from "./security/fetcher.ts";

export interface EngineContext {
  config: EngineConfig;
  /** The fetcher's policy: the config's, with the test hooks (DNS resolver, trusted fixture hosts). */
  policy: FetchPolicy;
  pool: Pool;
  jobs: JobRegistry;
  relay: Relay;
  warmProbes: WarmProbes;
  warmCommands: WarmCommands;
  /** This process's private temp directory. */
  tmpDir: string;
  /** The version lines of the binaries, for GET /v1/health. */
  versions: { ffmpeg: string | null; ffprobe: string | null };
  log: (line: string) => void;
}

/** The Hono environment of the engine's app: the Node request and response under it (@hono/node-server). */
export type EngineEnv = { Bindings: HttpBindings };
