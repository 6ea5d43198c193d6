/**
 * The engine's HTTP surface (protocol v1, README.md) as a Hono app on @hono/node-server: the routes, and as
 * middleware the load header, authentication, the JSON body validated by its @p6/contract/wire schema within
 * its limit (routes/validate.ts), and the error model (EngineError → `{code, message, field?}` with its status;
 * anything else a logged 500). The job and fetch routes answer on the Node response (HttpBindings.outgoing)
 * and return RESPONSE_ALREADY_SENT, because they watch the socket: the job is aborted when the client goes away
 * before its answer is complete, and a client that closes once it has every byte of the file is no abort
 * (http-io.ts abortOnDisconnect). The rest answer with Responses, streams included (a pipeline's events and
 * files: routes/pipelines.ts).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { EngineContext, EngineEnv } from "./context.ts";
import { fetchMedia, resolveTarget } from "./fetch-route.ts";
import {
  EngineError,
  FetchRequestSchema,
  invalid,
  JOB_TYPES,
  JobRequestSchema,
  PROTOCOL_VERSION,
  ResolveRequestSchema,
} from "./protocol.ts";
import { jobRoute } from "./routes/jobs.ts";
import { stampLoad } from "./routes/load.ts";
import { registerPipelineRoutes } from "./routes/pipelines.ts";
import { jsonBody } from "./routes/validate.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest();

export function createEngineApp(engine: EngineContext): Hono<EngineEnv> {
  const { pool, jobs, log } = engine;
  const app = new Hono<EngineEnv>();
  const secret = sha256(engine.config.secret);

  app.use(async (c, next) => {
    stampLoad(pool, c.env.outgoing);
    await next();
  });

  // The container's readiness check: no secret.
  app.get("/healthz", (c) => c.text("ok"));

  // Every other request carries the shared secret, compared in constant time. A missing or wrong one is a
  // fault between the Worker and us, never the API client's: INTERNAL.
  app.use(async (c, next) => {
    const header = c.req.header("authorization") ?? "";
    const token = header.startsWith("Bearer ") ? header.slice(7) : "";
    if (!timingSafeEqual(sha256(token), secret)) {
      return c.json({ code: "INTERNAL", message: "engine authentication failed" }, 401);
    }
    await next();
  });

  app.get("/v1/health", (c) =>
    c.json({
      ok: true,
      protocol: PROTOCOL_VERSION,
      ffmpeg: engine.versions.ffmpeg,
      ffprobe: engine.versions.ffprobe,
      slots: pool.stats(),
      light_slots: pool.lightStats(),
    }),
  );

  app.post("/v1/fetch", ...jsonBody(FetchRequestSchema), async (c) => {
    await fetchMedia(engine, c.req.valid("json"), c.env.incoming, c.env.outgoing);
    return RESPONSE_ALREADY_SENT;
  });

  app.post("/v1/resolve", ...jsonBody(ResolveRequestSchema), async (c) =>
    c.json(await resolveTarget(engine, c.req.valid("json"))),
  );

  for (const type of JOB_TYPES)
    app.post(`/v1/jobs/${type}`, ...jsonBody(JobRequestSchema), jobRoute(engine, type));

  registerPipelineRoutes(app, engine);

  app.get("/v1/jobs/:id", (c) => {
    const status = jobs.status(c.req.param("id"));
    if (status === null) return c.json({ code: "RESOURCE_NOT_FOUND", message: "no such job" }, 404);
    return c.json(status);
  });

  app.delete("/v1/jobs/:id", (c) => {
    const found = jobs.abort(c.req.param("id"), new EngineError("INTERNAL", "the job was aborted"));
    if (!found) return c.json({ code: "RESOURCE_NOT_FOUND", message: "no such job" }, 404);
    return c.body(null, 204);
  });

  app.notFound((c) => c.json({ code: "RESOURCE_NOT_FOUND", message: "no such route" }, 404));

  app.onError((err, c) => {
    // Hono's own refusals: a body that is not JSON (its validator's 400).
    const failure =
      err instanceof EngineError
        ? err
        : err instanceof HTTPException && err.status === 400
          ? invalid("body", "the request body must be JSON")
          : new EngineError("INTERNAL", "internal engine error");
    if (failure.code === "INTERNAL" && !(err instanceof EngineError)) log(`request failed: ${String(err)}`);
    // An answer before the body was read to its end (413) closes the connection: the unread rest must not be
    // parsed as a next request. It is discarded meanwhile, so the close is an orderly one rather than a reset.
    const { incoming, outgoing } = c.env;
    if (outgoing.headersSent) return RESPONSE_ALREADY_SENT;
    if (!incoming.complete) {
      c.header("connection", "close");
      incoming.resume();
    }
    return c.json(failure.toBody(), failure.status as ContentfulStatusCode);
  });

  return app;
}
