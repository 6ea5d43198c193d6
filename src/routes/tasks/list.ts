import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { pageFields, pagePosition } from "../../http/pagination";
import { listTasks } from "../../tasks/query";
import { serializeTask } from "../../tasks/serialize";
import { ListTasksQuerySchema, TaskListSchema } from "./schema";

const route = createRoute({
  method: "get",
  path: "/v1/tasks",
  operationId: "listTasks",
  tags: ["Tasks"],
  summary: "List tasks",
  description: "Newest first, with keyset cursor pagination that is stable under concurrent inserts.",
  request: { query: ListTasksQuerySchema },
  responses: {
    200: { description: "A page of tasks.", content: { "application/json": { schema: TaskListSchema } } },
    ...errorResponses(400, 401, 403, 405, 429, 500),
  },
});

export function registerListTasks(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const { rows, hasNext } = await listTasks(c.get("db"), c.get("principal").accountId, {
      idPrefix: query.id,
      status: query.status,
      type: query.type,
      createdFrom: query.created_from,
      createdTo: query.created_to,
      ...pagePosition(query),
    });
    const ctx = { origin: new URL(c.req.url).origin, fileSigningSecret: c.get("config").fileSigningSecret };
    return c.json(
      {
        ...pageFields(rows, hasNext),
        results: await Promise.all(rows.map((row) => serializeTask(row, ctx))),
      },
      200,
    );
  });
}
