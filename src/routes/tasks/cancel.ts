import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { ApiError } from "../../errors/api-error";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { notifyEnded } from "../../tasks/notify";
import { getTask } from "../../tasks/query";
import { runnerFor } from "../../tasks/queue";
import { serializeTask } from "../../tasks/serialize";
import { endTask } from "../../tasks/transitions";
import { isUlid } from "../../util/ulid";
import { TaskIdParamSchema, TaskSchema } from "./schema";

const route = createRoute({
  method: "post",
  path: "/v1/tasks/{id}/cancel",
  operationId: "cancelTask",
  tags: ["Tasks"],
  summary: "Cancel a task",
  description:
    "queued or processing → canceled: the work is aborted and the reserved credits refunded. Already canceled → 200 unchanged. Succeeded or failed → 409. No request body is needed; one that is sent must be JSON (415 otherwise), at most 1 MiB (413) and well-formed (400), and is ignored.",
  request: { params: TaskIdParamSchema },
  responses: {
    200: { description: "The canceled task.", content: { "application/json": { schema: TaskSchema } } },
    ...errorResponses(400, 401, 403, 404, 405, 409, 413, 415, 429, 500),
  },
});

export function registerCancelTask(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const db = c.get("db");
    const config = c.get("config");
    const origin = new URL(c.req.url).origin;
    let task = isUlid(id) ? await getTask(db, c.get("principal").accountId, id) : undefined;
    if (!task) throw new ApiError("RESOURCE_NOT_FOUND", `Task ${id} does not exist.`);
    if (task.status === "queued" || task.status === "processing") {
      const ended = await endTask(db, task, { status: "canceled" }, config.outputTtlMs, Date.now());
      if (ended) {
        c.executionCtx.waitUntil(runnerFor(c.env, task.id).cancel());
        await notifyEnded(c.env, db, ended);
      }
      task = ended ?? (await getTask(db, c.get("principal").accountId, id))!;
    }
    if (task.status === "succeeded" || task.status === "failed") {
      throw new ApiError(
        "RESOURCE_CONFLICT",
        `Task ${id} already ${task.status}; only queued or processing tasks can be canceled.`,
      );
    }
    return c.json(await serializeTask(task, { origin, fileSigningSecret: config.fileSigningSecret }), 200);
  });
}
