import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { ApiError } from "../../errors/api-error";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { getTask } from "../../tasks/query";
import { serializeTask } from "../../tasks/serialize";
import { isUlid } from "../../util/ulid";
import { TaskIdParamSchema, TaskSchema } from "./schema";

const route = createRoute({
  method: "get",
  path: "/v1/tasks/{id}",
  tags: ["Tasks"],
  summary: "Get a task",
  description: "Another account's task answers 404: its existence is not revealed.",
  request: { params: TaskIdParamSchema },
  responses: {
    200: { description: "The task.", content: { "application/json": { schema: TaskSchema } } },
    ...errorResponses(401, 403, 404, 429, 500),
  },
});

export function registerGetTask(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const row = isUlid(id) ? await getTask(c.get("db"), c.get("principal").accountId, id) : undefined;
    if (!row) throw new ApiError("RESOURCE_NOT_FOUND", `Task ${id} does not exist.`);
    const ctx = { origin: new URL(c.req.url).origin, fileSigningSecret: c.get("config").fileSigningSecret };
    return c.json(await serializeTask(row, ctx), 200);
  });
}
