import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import { PROBLEM_JSON } from "../errors/problem";
import type { AppEnv, Principal } from "../http/context";
import { recordRequest } from "./log";

/** The pattern of the route that answered (`/v1/tasks/:id`), never the raw path; "" when none matched. */
function routePattern(c: Context<AppEnv>) {
  const routes = matchedRoutes(c).filter((r) => r.method !== "ALL" && !r.path.endsWith("*"));
  return routes.at(-1)?.path ?? "";
}

/** The problem type's suffix of an error answer (`…/errors/not-found` → `not-found`), else null. */
async function errorCode(response: Response) {
  if (response.status < 400 || !response.headers.get("content-type")?.startsWith(PROBLEM_JSON)) return null;
  const body = (await response.json().catch(() => null)) as { type?: unknown } | null;
  return typeof body?.type === "string" ? (body.type.split("/").at(-1) ?? null) : null;
}

/**
 * The request log (src/requests/log.ts). Wraps authentication, so it also sees the answers authentication
 * gives (403 for a missing scope), but writes a row only once a key is established: a request without a valid
 * key, or refused by the key's rate limit, writes nothing, so a stranger cannot turn traffic into D1 writes.
 * The row is written after the response, in waitUntil, to the account's own log (a Durable Object, not D1:
 * src/requests/request-log.ts), together with the rows of the isolate's other requests for that account in the
 * same 50 ms (src/requests/log.ts).
 */
export const requestLog = createMiddleware<AppEnv>(async (c, next) => {
  const started = Date.now();
  await next();
  const principal = c.get("principal") as Principal | undefined;
  if (!principal) return;
  const entry = {
    id: c.get("requestId"),
    keyId: principal.keyId,
    method: c.req.method,
    route: routePattern(c),
    status: c.res.status,
    durationMs: Date.now() - started,
    createdAt: started,
  };
  // A clone of a problem body only (small); success bodies are never read.
  const problem = entry.status >= 400 ? c.res.clone() : undefined;
  const write = (async () => {
    const code = problem ? await errorCode(problem) : null;
    await recordRequest(c.env, principal.accountId, { ...entry, errorCode: code });
  })().catch((error: unknown) => {
    console.error(
      JSON.stringify({
        level: "error",
        request_id: entry.id,
        message: "request log write failed",
        error: error instanceof Error ? error.message : String(error),
      }),
    );
  });
  c.executionCtx.waitUntil(write);
});
