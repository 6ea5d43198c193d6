import type { OpenAPIHono } from "@hono/zod-openapi";
import { Hono } from "hono";
import { ASSET_PATHS, registerAssets } from "../../console/assets";
import type { ConsoleEnv } from "../../console/context";
import { extendCsp } from "../../console/csp";
import { consoleError } from "../../console/errors";
import { registerAuthPages } from "../../console/pages/auth";
import { registerCreditPages } from "../../console/pages/credits";
import { registerEmailPages } from "../../console/pages/email";
import { registerKeyPages } from "../../console/pages/keys";
import { registerOverview } from "../../console/pages/overview";
import { registerPasswordStrength } from "../../console/pages/password-strength";
import { registerRequestLog } from "../../console/pages/requests";
import { registerSecurityPages, registerSignOut } from "../../console/pages/security";
import { registerTaskPages } from "../../console/pages/tasks";
import { registerUploadPages } from "../../console/pages/uploads";
import { registerUsagePage } from "../../console/pages/usage";
import { registerWebhookPages } from "../../console/pages/webhooks";
import { CONSOLE, consolePaths } from "../../console/paths";
import { requireUser, verifySessionForm } from "../../console/session";
import type { AppEnv } from "../../http/context";
import { notFound } from "../../ui/error-page";
import { securityHeaders } from "../../ui/security-headers";

const READS = new Set(["GET", "HEAD"]);
/**
 * Pages anyone may open (their forms carry the pre-session's CSRF token, checked by their own handlers) and the
 * console's browser files.
 */
const PUBLIC = new Set([
  consolePaths.signIn,
  consolePaths.signInPasskey,
  consolePaths.signUp,
  consolePaths.verify,
  consolePaths.reset,
  consolePaths.resetNew,
  ...ASSET_PATHS,
  consolePaths.passwordStrength,
]);

/**
 * The customer console under /console: server-rendered pages over the same domain functions as the admin API,
 * scoped to the signed-in user's account. Order: a page's additions to the CSP (on the way out, after) →
 * security headers → sign-in, sign-up, the scripts and the password meter as they are → a live session for everything else → for every POST, a same-origin form with the session's CSRF
 * token → the page.
 */
export function registerConsole(app: OpenAPIHono<AppEnv>) {
  // Not `console`: that name would hide the global console in this function.
  const pages = new Hono<ConsoleEnv>();
  pages.onError(consoleError);
  pages.use("*", extendCsp);
  pages.use("*", securityHeaders);
  pages.use("*", async (c, next) => {
    if (PUBLIC.has(c.req.path)) return next();
    return requireUser(c, async () => {
      if (READS.has(c.req.method)) return next();
      await verifySessionForm(c, next);
    });
  });

  registerAssets(pages);
  registerAuthPages(pages);
  registerPasswordStrength(pages);
  registerEmailPages(pages);
  registerSignOut(pages);
  registerOverview(pages);
  registerKeyPages(pages);
  registerWebhookPages(pages);
  registerTaskPages(pages);
  registerRequestLog(pages);
  registerUploadPages(pages);
  registerUsagePage(pages);
  registerCreditPages(pages);
  registerSecurityPages(pages);
  pages.all("*", () => {
    throw notFound("This page");
  });

  app.route(CONSOLE, pages);
}
