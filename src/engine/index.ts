/**
 * Chooses how the Worker reaches the media engine: ENGINE_URL when it is set (development and tests run
 * the engine as a local process), otherwise the Container binding (production).
 */
import { getContainer } from "@cloudflare/containers";
import type { MediaEngineContainer } from "./container.ts";
import { HttpMediaEngine } from "./http-engine.ts";
import type { MediaEngine } from "./types.ts";

export { MediaEngineContainer } from "./container.ts";
export {
  HttpMediaEngine,
  readEngineError,
  readEngineResult,
  readEngineTiming,
  readFetchedMedia,
} from "./http-engine.ts";
export type * from "./types.ts";

export interface EngineConfig {
  /** Base URL of a running engine process (e.g. http://127.0.0.1:8788). Wins over `container`. */
  engineUrl?: string | undefined;
  /** The MediaEngineContainer Durable Object namespace. */
  container?: DurableObjectNamespace<MediaEngineContainer> | undefined;
  /** ENGINE_SECRET, shared with the engine. */
  secret: string;
  /** Container instances to spread jobs over (default 3). */
  instances?: number;
}

/** Stable instance index for a routing key (FNV-1a), so a job's progress and abort reach its instance. */
export function instanceFor(key: string, instances: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % instances;
}

export function createEngine(config: EngineConfig): MediaEngine {
  if (config.engineUrl !== undefined && config.engineUrl !== "") {
    return new HttpMediaEngine({
      baseUrl: config.engineUrl,
      secret: config.secret,
      fetcher: (request) => fetch(request),
    });
  }
  const namespace = config.container;
  if (namespace === undefined) throw new Error("media engine: set ENGINE_URL or bind MediaEngineContainer");
  const instances = Math.max(1, config.instances ?? 3);
  return new HttpMediaEngine({
    baseUrl: "http://engine",
    secret: config.secret,
    fetcher: (request, key) => {
      const index = key === undefined ? Math.floor(Math.random() * instances) : instanceFor(key, instances);
      return getContainer(namespace, `engine-${index}`).fetch(request);
    },
  });
}
