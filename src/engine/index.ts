/**
 * Chooses how the Worker reaches the media engine: ENGINE_URL when it is set (development and tests run
 * the engine as a local process), otherwise the Container binding (production).
 */
import { getContainer } from "@cloudflare/containers";
import { engineUrls } from "../config/config";
import type { MediaEngineContainer } from "./container.ts";
import { type EngineTarget, HttpMediaEngine, urlTarget } from "./http-engine.ts";
import type { MediaEngine, Priority } from "./types.ts";

export { MediaEngineContainer } from "./container.ts";
export {
  type EngineTarget,
  HttpMediaEngine,
  readEngineError,
  readEngineResult,
  readEngineTiming,
  readFetchedMedia,
  readPipelineEvents,
  urlTarget,
} from "./http-engine.ts";
export { ENGINE_LOAD_HEADER, LoadBoard, parseEngineLoad } from "./load.ts";
export type * from "./types.ts";

export interface EngineConfig {
  /** Base URL(s) of running engine processes, comma-separated (e.g. http://127.0.0.1:8788). Wins over `container`. */
  engineUrl?: string | undefined;
  /** The MediaEngineContainer Durable Object namespace. */
  container?: DurableObjectNamespace<MediaEngineContainer> | undefined;
  /** ENGINE_SECRET, shared with the engine. */
  secret: string;
  /** Container instances to spread jobs over, "engine-0"… (default 3, wrangler.toml's max_instances). */
  instances?: number;
  /** "low" for tasks: see HttpMediaEngineOptions.priority. */
  priority?: Priority;
}

export function createEngine(config: EngineConfig): MediaEngine {
  const urls = engineUrls(config.engineUrl ?? "");
  if (urls.length > 0)
    return new HttpMediaEngine({
      targets: urls.map(urlTarget),
      secret: config.secret,
      priority: config.priority ?? "normal",
    });
  const namespace = config.container;
  if (namespace === undefined) throw new Error("media engine: set ENGINE_URL or bind MediaEngineContainer");
  const targets = Array.from({ length: Math.max(1, config.instances ?? 3) }, (_, i): EngineTarget => {
    const name = `engine-${i}`;
    return {
      name,
      baseUrl: "http://engine",
      fetch: (request) => getContainer(namespace, name).fetch(request),
    };
  });
  return new HttpMediaEngine({ targets, secret: config.secret, priority: config.priority ?? "normal" });
}
