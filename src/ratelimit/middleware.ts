import type { Context } from "hono";
import { ApiError } from "../errors/api-error";
import type { AppEnv } from "../http/context";
import type { RateDecision } from "./limiter";

const POLICY = "default";

/** IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers, structured form). */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    "RateLimit-Policy": `"${POLICY}";q=${decision.limit};w=60`,
    RateLimit: `"${POLICY}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}

/** Counts the request against the key's limit; sets the fields on the response or throws 429. */
export async function enforceRateLimit(c: Context<AppEnv>, keyId: string, limit: number) {
  const limiter = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(keyId));
  const decision = await limiter.hit(limit);
  const headers = rateLimitHeaders(decision);
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
  if (!decision.allowed) {
    throw new ApiError(
      "RATE_LIMIT_EXCEEDED",
      `Rate limit of ${limit} requests per minute exceeded; retry after ${decision.retryAfterSeconds} s.`,
      { headers: { ...headers, "Retry-After": String(decision.retryAfterSeconds) } },
    );
  }
}
