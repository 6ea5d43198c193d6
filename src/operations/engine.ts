import type { Config } from "../config/config";
import { createEngine, type MediaEngine, type Priority } from "../engine";
import { ApiError } from "../errors/api-error";

/** The media engine for this deployment: ENGINE_URL when set (dev, tests), else the Container binding. */
export function engineFor(env: Env, config: Config, options: { priority?: Priority } = {}): MediaEngine {
  const container = env.MEDIA_ENGINE;
  if (!config.engineSecret || (!config.engineUrl && !container)) {
    throw new ApiError("SERVICE_UNAVAILABLE", "The media engine is not configured on this deployment.");
  }
  return createEngine({
    engineUrl: config.engineUrl,
    container,
    secret: config.engineSecret,
    instances: config.engineInstances,
    priority: options.priority ?? "normal",
  });
}
