import { ApiError } from "../errors/api-error";

/** Retry-After of an engine that is saturated, starting or unreachable: jobs end, containers start, in seconds. */
export const ENGINE_RETRY_AFTER_SECONDS = 2;

/** 503 SERVICE_UNAVAILABLE with Retry-After: every engine capacity refusal a client sees is this one. */
export function engineUnavailable(
  retryAfterSeconds = ENGINE_RETRY_AFTER_SECONDS,
  detail = "The media engine is busy; retry after the delay in Retry-After.",
  cause?: unknown,
) {
  return new ApiError("SERVICE_UNAVAILABLE", detail, {
    headers: { "Retry-After": String(retryAfterSeconds) },
    cause,
  });
}
