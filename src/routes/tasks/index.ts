import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/context";
import { registerGetTask } from "./get";
import { registerListTasks } from "./list";

export function registerTaskRoutes(app: OpenAPIHono<AppEnv>) {
  registerListTasks(app);
  registerGetTask(app);
}
