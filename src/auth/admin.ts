import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors/api-error";
import type { AppEnv } from "../http/context";
import { OPERATOR_THROTTLE, operatorRetryAfter, recordOperatorFailure } from "./operator-throttle";
import { digestsEqual, hashSecret } from "./token";

/**
 * The operator API guard (decisions.md §13): Bearer ADMIN_TOKEN, compared in constant time (as digests, so
 * lengths leak nothing). Without ADMIN_TOKEN the admin API does not exist: 404. A client address with 10
 * wrong tokens in 15 minutes (operator-throttle.ts) is refused with 429 before its token is looked at.
 */
export const adminAuth = createMiddleware<AppEnv>(async (c, next) => {
  const expected = c.get("config").adminToken;
  if (!expected) throw new ApiError("RESOURCE_NOT_FOUND", `No resource at ${new URL(c.req.url).pathname}.`);
  const retryAfter = await operatorRetryAfter(c);
  if (retryAfter !== null) {
    throw new ApiError(
      "RATE_LIMIT_EXCEEDED",
      `Too many wrong admin tokens from this address (${OPERATOR_THROTTLE.failures} in ${OPERATOR_THROTTLE.windowMinutes} minutes); retry after ${retryAfter} s.`,
      { headers: { "Retry-After": String(retryAfter) } },
    );
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "");
  const [presented, wanted] = await Promise.all([hashSecret(match?.[1] ?? ""), hashSecret(expected)]);
  if (!match || !digestsEqual(presented, wanted)) {
    // A request without a token is not a guess; a wrong token is.
    if (match) await recordOperatorFailure(c);
    throw new ApiError(
      "AUTH_UNAUTHORIZED",
      "A valid admin token is required: Authorization: Bearer <ADMIN_TOKEN>.",
      {
        headers: { "WWW-Authenticate": "Bearer" },
      },
    );
  }
  await next();
});
