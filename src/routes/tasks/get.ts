import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { presentsWellFormedKey } from "../../auth/middleware";
import { ApiError } from "../../errors/api-error";
import { errorResponses, headers } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { PreferWaitHeaders, preferredWait } from "../../http/prefer";
import { readTask } from "../../tasks/query";
import { serializeTask } from "../../tasks/serialize";
import { taskWhenEnded } from "../../tasks/wait";
import { isUlid } from "../../util/ulid";
import { TaskIdParamSchema, TaskSchema } from "./schema";

const route = createRoute({
  method: "get",
  path: "/v1/tasks/{id}",
  operationId: "getTask",
  tags: ["Tasks"],
  summary: "Get a task",
  description:
    "Another account's task answers 404: its existence is not revealed. With `Prefer: wait=<seconds>` the answer is held until the task ends (or those seconds pass), then gives it as it is: a long poll that answers within milliseconds of the task's end.",
  request: { params: TaskIdParamSchema, headers: PreferWaitHeaders },
  responses: {
    200: {
      description: "The task.",
      headers: headers("Preference-Applied"),
      content: { "application/json": { schema: TaskSchema } },
    },
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
    const wait = preferredWait(c.req.valid("header").prefer);
    const found = await (c.get("taskRead") ?? (isUlid(id) ? readTask(c.get("db"), id) : undefined));
    let row = found?.accountId === c.get("principal").accountId ? found : undefined;
    if (!row) throw new ApiError("RESOURCE_NOT_FOUND", `Task ${id} does not exist.`);
    if (wait) {
      row = await taskWhenEnded(c.env, c.get("db"), row, wait);
      c.header("Preference-Applied", `wait=${wait}`);
    }
    const ctx = { origin: new URL(c.req.url).origin, fileSigningSecret: c.get("config").fileSigningSecret };
    return c.json(await serializeTask(row, ctx), 200);
  });
}
