import type { Context } from "hono";
import { ApiError } from "../errors/api-error";
import { problemResponse } from "../errors/handler";
import type { AppEnv } from "./context";

type RouteEntry = { method: string; path: string };

function compile(routes: RouteEntry[]) {
  const byPattern = new Map<string, { regex: RegExp; methods: Set<string> }>();
  for (const { method, path } of routes) {
    if (method === "ALL" || path.endsWith("*")) continue;
    let entry = byPattern.get(path);
    if (!entry) {
      const source = path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z0-9_]+/g, "[^/]+");
      entry = { regex: new RegExp(`^${source}/?$`), methods: new Set() };
      byPattern.set(path, entry);
    }
    entry.methods.add(method);
    if (method === "GET") entry.methods.add("HEAD");
  }
  return [...byPattern.values()];
}

/**
 * Unmatched requests: 405 with Allow when the path exists under other methods, else 404 — both problem+json.
 * The route table is read from the app once.
 */
export function notFoundHandler(routes: () => RouteEntry[]) {
  let table: ReturnType<typeof compile> | undefined;
  return (c: Context<AppEnv>): Response => {
    table ??= compile(routes());
    const path = new URL(c.req.url).pathname;
    const allowed = new Set<string>();
    for (const entry of table) if (entry.regex.test(path)) for (const m of entry.methods) allowed.add(m);
    if (allowed.size > 0) {
      return problemResponse(
        c,
        new ApiError("METHOD_NOT_ALLOWED", `${c.req.method} is not allowed on ${path}.`, {
          headers: { Allow: [...allowed].sort().join(", ") },
        }),
      );
    }
    return problemResponse(c, new ApiError("RESOURCE_NOT_FOUND", `No resource at ${path}.`));
  };
}
