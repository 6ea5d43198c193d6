import type { OpenAPIHono } from "@hono/zod-openapi";
import { Hono } from "hono";
import type { DashboardEnv } from "../../dashboard/context";
import { dashboardError } from "../../dashboard/errors";
import {
  clearCookie,
  requireAdminToken,
  requireSession,
  SESSION_COOKIE,
  verifyForm,
} from "../../dashboard/middleware";
import { registerAccount } from "../../dashboard/pages/account";
import { registerAccounts } from "../../dashboard/pages/accounts";
import { registerKeys } from "../../dashboard/pages/keys";
import { registerSignIn } from "../../dashboard/pages/sign-in";
import { registerTasks } from "../../dashboard/pages/tasks";
import { registerWebhookSecret } from "../../dashboard/pages/webhook-secret";
import { BASE, paths } from "../../dashboard/paths";
import type { AppEnv } from "../../http/context";
import { endSession } from "../../sessions/store";
import { notFound } from "../../ui/error-page";
import { securityHeaders } from "../../ui/security-headers";

const READS = new Set(["GET", "HEAD"]);
const verifySessionForm = verifyForm(async (c) => c.get("session"));

/**
 * The operator dashboard under /dashboard: server-rendered pages over the same domain functions as the admin
 * API. Order: security headers → 404 unless ADMIN_TOKEN is set → sign-in (its own form token) → a session for
 * everything else → for every POST, a same-origin form with the session's CSRF token → the page.
 */
export function registerDashboard(app: OpenAPIHono<AppEnv>) {
  const dashboard = new Hono<DashboardEnv>();
  dashboard.onError(dashboardError);
  dashboard.use("*", securityHeaders, requireAdminToken);
  dashboard.use("*", async (c, next) => {
    if (c.req.path === paths.login) return next();
    return requireSession(c, async () => {
      if (READS.has(c.req.method)) return next();
      await verifySessionForm(c, next);
    });
  });

  registerSignIn(dashboard);
  // Deleting the row is what signs out: a copy of the cookie is refused from then on.
  dashboard.post("/logout", async (c) => {
    await endSession(c.get("db"), c.get("session").id);
    clearCookie(c, SESSION_COOKIE);
    return c.redirect(paths.login, 303);
  });
  registerAccounts(dashboard);
  registerAccount(dashboard);
  registerKeys(dashboard);
  registerWebhookSecret(dashboard);
  registerTasks(dashboard);
  dashboard.all("*", () => {
    throw notFound("This page");
  });

  app.route(BASE, dashboard);
}
