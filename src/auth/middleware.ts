import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors/api-error";
import type { AppEnv } from "../http/context";
import { rateLimitExceeded, rateLimitHeaders } from "../ratelimit/headers";
import { authenticateKey, type Scope } from "./authenticate";
import { parseToken } from "./token";

const CHALLENGE = { "WWW-Authenticate": "Bearer" };

function unauthorized(detail: string) {
  return new ApiError("AUTH_UNAUTHORIZED", detail, { headers: CHALLENGE });
}

/** The scope a method needs: read for GET/HEAD, write for everything that changes state. */
function requiredScope(method: string): Scope {
  return method === "GET" || method === "HEAD" ? "read" : "write";
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), else undefined. */
function bearerToken(header: string): string | undefined {
  const [scheme, token, ...rest] = header.trim().split(/\s+/);
  return scheme?.toLowerCase() === "bearer" && rest.length === 0 ? token : undefined;
}

/** True when the request presents a well-formed API key (not yet checked against its gate). */
export function presentsWellFormedKey(authorization: string | undefined): boolean {
  const token = authorization === undefined ? undefined : bearerToken(authorization);
  return token !== undefined && parseToken(token) !== null;
}

/**
 * API-key authentication (interface.md "Authentication", decisions.md §10) and the per-key rate limit in one
 * call to the key's gate, then the scope check — so a refused scope still counts and carries RateLimit fields.
 */
export const apiKeyAuth = createMiddleware<AppEnv>(async (c, next) => {
  const started = performance.now();
  const header = c.req.header("authorization");
  if (!header) {
    throw unauthorized(
      c.req.header("x-api-key") !== undefined
        ? "The X-API-Key header is not accepted; send Authorization: Bearer p6_<key_id>:<secret>."
        : "The Authorization header is missing; send Authorization: Bearer p6_<key_id>:<secret>.",
    );
  }
  const token = bearerToken(header);
  if (token === undefined) {
    throw unauthorized("Only the Bearer scheme is accepted: Authorization: Bearer p6_<key_id>:<secret>.");
  }
  const parsed = parseToken(token);
  if (!parsed) throw unauthorized("The API key is malformed; expected p6_<key_id>:<secret>.");

  const key = await authenticateKey(c.env, parsed, c.get("config").defaultRateLimitPerMinute).catch(
    (error: unknown) => {
      throw error instanceof ApiError
        ? new ApiError(error.code, error.detail, { headers: CHALLENGE })
        : error;
    },
  );
  c.get("timing").add("auth", performance.now() - started);
  for (const [name, value] of Object.entries(rateLimitHeaders(key.rate))) c.header(name, value);
  if (!key.rate.allowed) throw rateLimitExceeded(key.rate);
  c.set("principal", { keyId: key.keyId, accountId: key.accountId, scopes: key.scopes });

  if (!key.scopes.has(requiredScope(c.req.method))) {
    throw new ApiError(
      "PERMISSION_FORBIDDEN",
      `This API key lacks the ${requiredScope(c.req.method)} scope needed for ${c.req.method} requests.`,
    );
  }
  await next();
});
