import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/context";
import { registerCancelTask } from "./cancel";
import { registerCreateTask } from "./create";
import { registerGetTask } from "./get";
import { registerListTasks } from "./list";

export function registerTaskRoutes(app: OpenAPIHono<AppEnv>) {
  registerCreateTask(app);
  registerListTasks(app);
  registerGetTask(app);
  registerCancelTask(app);
}
