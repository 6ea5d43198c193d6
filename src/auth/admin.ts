import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors/api-error";
import type { AppEnv } from "../http/context";
import { digestsEqual, hashSecret } from "./token";

/**
 * The operator API guard (decisions.md §13): Bearer ADMIN_TOKEN, compared in constant time (as digests, so
 * lengths leak nothing). Without ADMIN_TOKEN the admin API does not exist: 404.
 */
export const adminAuth = createMiddleware<AppEnv>(async (c, next) => {
  const expected = c.get("config").adminToken;
  if (!expected) throw new ApiError("RESOURCE_NOT_FOUND", `No resource at ${new URL(c.req.url).pathname}.`);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "");
  const [presented, wanted] = await Promise.all([hashSecret(match?.[1] ?? ""), hashSecret(expected)]);
  if (!match || !digestsEqual(presented, wanted)) {
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
