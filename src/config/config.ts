import { z } from "zod";

const flag = z
  .enum(["true", "false", "1", "0", ""])
  .optional()
  .transform((v) => v === "true" || v === "1");
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** Everything the Worker reads from its environment, parsed once per isolate (see `getConfig`). */
const ConfigSchema = z.object({
  ADMIN_TOKEN: optionalString,
  ERROR_TYPE_BASE: optionalString.pipe(z.url().optional()),
  ALLOW_PRIVATE_SOURCES: flag,
  SYNC_TIMEOUT_SECONDS: positiveInt(30),
  OUTPUT_TTL_SECONDS: positiveInt(86_400),
  DEFAULT_RATE_LIMIT_PER_MINUTE: positiveInt(60),
  FILE_SIGNING_SECRET: optionalString,
  ENGINE_SECRET: optionalString,
  ENGINE_URL: optionalString,
});

export type Config = {
  adminToken: string | undefined;
  /** Fixed base for problem `type` URIs; when unset it is derived from the request origin. */
  errorTypeBase: string | undefined;
  allowPrivateSources: boolean;
  syncTimeoutMs: number;
  outputTtlMs: number;
  defaultRateLimitPerMinute: number;
  fileSigningSecret: string | undefined;
  engineSecret: string | undefined;
  engineUrl: string | undefined;
};

const cache = new WeakMap<object, Config>();

export function getConfig(env: Env): Config {
  const hit = cache.get(env);
  if (hit) return hit;
  const raw = ConfigSchema.parse(env);
  const config: Config = {
    adminToken: raw.ADMIN_TOKEN,
    errorTypeBase: raw.ERROR_TYPE_BASE?.replace(/\/+$/, ""),
    allowPrivateSources: raw.ALLOW_PRIVATE_SOURCES,
    syncTimeoutMs: raw.SYNC_TIMEOUT_SECONDS * 1000,
    outputTtlMs: raw.OUTPUT_TTL_SECONDS * 1000,
    defaultRateLimitPerMinute: raw.DEFAULT_RATE_LIMIT_PER_MINUTE,
    fileSigningSecret: raw.FILE_SIGNING_SECRET,
    engineSecret: raw.ENGINE_SECRET,
    engineUrl: raw.ENGINE_URL,
  };
  cache.set(env, config);
  return config;
}
