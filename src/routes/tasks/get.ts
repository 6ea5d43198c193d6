import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { presentsWellFormedKey } from "../../auth/middleware";
import { ApiError } from "../../errors/api-error";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { readTask } from "../../tasks/query";
import { serializeTask } from "../../tasks/serialize";
import { isUlid } from "../../util/ulid";
import { TaskIdParamSchema, TaskSchema } from "./schema";

const route = createRoute({
  method: "get",
  path: "/v1/tasks/{id}",
  operationId: "getTask",
  tags: ["Tasks"],
  summary: "Get a task",
  description: "Another account's task answers 404: its existence is not revealed.",
  request: { params: TaskIdParamSchema },
  responses: {
    200: { description: "The task.", content: { "application/json": { schema: TaskSchema } } },
    ...errorResponses(401, 403, 404, 405, 429, 500),
  },
});

/**
 * Starts the D1 read of GET /v1/tasks/{id} while the key's gate checks the key (app.ts runs this before
 * apiKeyAuth), so the two round trips overlap instead of adding up. Only for a well-formed key and a
 * well-formed id. Nothing is revealed early: the route awaits the row only after authentication has passed,
 * and compares its account then; a refused key never waits for the read.
 */
export const taskReadAhead = createMiddleware<AppEnv>(async (c, next) => {
  const id = c.req.param("id");
  if (
    c.req.method === "GET" &&
    id !== undefined &&
    isUlid(id) &&
    presentsWellFormedKey(c.req.header("authorization"))
  ) {
    const read = readTask(c.get("db"), id);
    read.catch(() => {}); // awaited (and its failure thrown) by the route, once the key is checked
    c.set("taskRead", read);
  }
  await next();
});

export function registerGetTask(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const found = await (c.get("taskRead") ?? (isUlid(id) ? readTask(c.get("db"), id) : undefined));
    const row = found?.accountId === c.get("principal").accountId ? found : undefined;
    if (!row) throw new ApiError("RESOURCE_NOT_FOUND", `Task ${id} does not exist.`);
    const ctx = { origin: new URL(c.req.url).origin, fileSigningSecret: c.get("config").fileSigningSecret };
    return c.json(await serializeTask(row, ctx), 200);
  });
}
