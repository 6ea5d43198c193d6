import { OpenAPIHono } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { methodOverride } from "hono/method-override";
import { adminAuth } from "./auth/admin";
import { apiKeyAuth } from "./auth/middleware";
import { onError } from "./errors/handler";
import { bodyGuard } from "./http/body-guard";
import type { AppEnv } from "./http/context";
import { notFoundHandler } from "./http/not-found";
import { requestContext } from "./http/request-context";
import { securityHeaders } from "./http/security-headers";
import { debugServerTiming } from "./http/timing";
import { validationHook } from "./http/validation";
import { requestLog } from "./requests/middleware";
import { registerGetAccount } from "./routes/account/get";
import { registerAdminRoutes } from "./routes/admin";
import { registerConsole } from "./routes/console";
import { registerDashboard } from "./routes/dashboard";
import { registerDevMailbox } from "./routes/dev/mailbox";
import { registerDocs } from "./routes/docs";
import { registerErrorPages } from "./routes/errors";
import { registerFileRoutes } from "./routes/files/get";
import { OPERATION_PATHS, registerOperationRoutes } from "./routes/operations";
import { registerTaskRoutes } from "./routes/tasks";
import { taskReadAhead } from "./routes/tasks/get";
import { registerUploadRoutes } from "./routes/uploads";
import { tusResponseHeader } from "./routes/uploads/schema";
import { registerGetUsage } from "./routes/usage/get";

const PUBLIC_PATHS = new Set(["/v1/openapi.json"]);

const DIRECT_UPLOADS = "/v1/direct-uploads/";
/**
 * Tus uploads carry raw bytes, not JSON: the body guard leaves them to src/uploads (bounded there). Not
 * POST /v1/uploads/direct, which takes JSON.
 */
const isUploadPath = (path: string) =>
  path === "/v1/uploads" ||
  (path.startsWith("/v1/uploads/") && path !== "/v1/uploads/direct") ||
  path.startsWith(DIRECT_UPLOADS);
/**
 * No key: tus discovery (OPTIONS /v1/uploads), which tus clients and browsers send without one, and the
 * direct upload URLs, whose secret is their credential (checked by the upload's object).
 */
const isPublic = (c: { req: { path: string; method: string } }) =>
  PUBLIC_PATHS.has(c.req.path) ||
  (c.req.method === "OPTIONS" && c.req.path === "/v1/uploads") ||
  c.req.path.startsWith(DIRECT_UPLOADS);

/**
 * tus: a POST with X-HTTP-Method-Override is the method it names (for clients that cannot send PATCH or
 * DELETE), under the upload URLs only. Hono's middleware dispatches it again through the whole app, so it
 * runs first.
 */
function tusMethodOverride(app: OpenAPIHono<AppEnv>) {
  const override = methodOverride({ app, header: "X-HTTP-Method-Override" });
  return createMiddleware<AppEnv>((c, next) => (c.req.method === "POST" ? override(c, next) : next()));
}

/**
 * The application, built once. Middleware order: (upload URLs: tus's X-HTTP-Method-Override) → security headers (on the way out, every response) → request
 * context (id, config, db) → (synchronous operations: Server-Timing) → (GET /v1/tasks/{id} only:
 * the task read starts) → request log (written after the response) → authentication and rate limit (/v1) or the admin token (/admin/v1) → body guard
 * (1 MiB, JSON only) → the route's validation → handler.
 */
export function createApp() {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.onError(onError);
  app.notFound(notFoundHandler(() => app.routes));

  app.use("/v1/uploads/*", tusMethodOverride(app));
  app.use(`${DIRECT_UPLOADS}*`, tusMethodOverride(app));
  app.use("*", securityHeaders);
  app.use("*", requestContext);
  // Synchronous operations: Server-Timing (X-Debug-Timing) by hono/timing, its total counting from here.
  app.use("/v1/*", async (c, next) =>
    OPERATION_PATHS.has(c.req.path) ? debugServerTiming(c, next) : next(),
  );
  app.use("/v1/tasks/:id", taskReadAhead); // overlaps the task read with the key check (routes/tasks/get.ts)
  app.use("/v1/uploads", tusResponseHeader); // Tus-Resumable on every answer, errors included
  app.use("/v1/uploads/*", tusResponseHeader);
  app.use(`${DIRECT_UPLOADS}*`, tusResponseHeader);
  app.use("/v1/*", requestLog); // writes after the response, once authentication named a key (src/requests)
  app.use("/v1/*", async (c, next) => (isPublic(c) ? next() : apiKeyAuth(c, next)));
  app.use("/admin/v1/*", async (c, next) =>
    c.req.path === "/admin/v1/openapi.json" ? next() : adminAuth(c, next),
  );
  app.use("/v1/*", async (c, next) => (isUploadPath(c.req.path) ? next() : bodyGuard(c, next)));
  app.use("/admin/v1/*", bodyGuard);

  app.get("/", (c) => c.json({ service: "p6 media API", docs: "/docs", openapi: "/v1/openapi.json" }));
  app.get("/healthz", (c) => c.text("ok"));

  registerTaskRoutes(app);
  registerOperationRoutes(app);
  registerUploadRoutes(app);
  registerGetAccount(app);
  registerGetUsage(app);
  registerAdminRoutes(app);
  registerFileRoutes(app);
  registerDocs(app);
  registerErrorPages(app);
  registerDashboard(app);
  registerConsole(app);
  registerDevMailbox(app);
  return app;
}
