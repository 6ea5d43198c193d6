import { ApiError } from "../errors/api-error";
import type { RateDecision } from "./window";

const POLICY = "default";

/** IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers, structured form). */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    "RateLimit-Policy": `"${POLICY}";q=${decision.limit};w=60`,
    RateLimit: `"${POLICY}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}

export function rateLimitExceeded(decision: RateDecision) {
  return new ApiError(
    "RATE_LIMIT_EXCEEDED",
    `Rate limit of ${decision.limit} requests per minute exceeded; retry after ${decision.retryAfterSeconds} s.`,
    { headers: { ...rateLimitHeaders(decision), "Retry-After": String(decision.retryAfterSeconds) } },
  );
}
