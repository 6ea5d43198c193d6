import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/context";
import { registerAdminAccounts } from "./accounts";
import { registerAdminCredits } from "./credits";
import { registerAdminKeys } from "./keys";
import { registerAdminWebhookSecret } from "./webhook-secret";

export function registerAdminRoutes(app: OpenAPIHono<AppEnv>) {
  registerAdminAccounts(app);
  registerAdminKeys(app);
  registerAdminCredits(app);
  registerAdminWebhookSecret(app);
}
