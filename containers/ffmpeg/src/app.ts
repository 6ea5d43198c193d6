/**
 * The engine's HTTP surface (protocol v1, README.md) as a Hono app on @hono/node-server: the routes, and as
 * middleware the load header, authentication, the JSON body and its limit, and the error model (EngineError →
 * `{code, message, field?}` with its status; anything else a logged 500). Routes that stream a file answer on
 * the Node response (HttpBindings.outgoing) and return RESPONSE_ALREADY_SENT: the file goes disk → socket with
 * backpressure, never through memory (http-io.ts).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { Hono, type MiddlewareHandler } from "hono";
import type { EngineContext } from "./context.ts";
import { fetchMedia, resolveTarget } from "./fetch-route.ts";
import { readJson, sendError } from "./http-io.ts";
import { EngineError, JOB_TYPES, PROTOCOL_VERSION } from "./protocol.ts";
import { jobRoute } from "./routes/jobs.ts";
import { stampLoad } from "./routes/load.ts";

export type EngineEnv = { Bindings: HttpBindings; Variables: { body: Record<string, unknown> } };

const sha256 = (text: string) => createHash("sha256").update(text).digest();

export function createEngineApp(engine: EngineContext): Hono<EngineEnv> {
  const { pool, jobs, log } = engine;
  const app = new Hono<EngineEnv>();
  const secret = sha256(engine.config.secret);

  /** The request body as JSON (an object), read up to LIMITS.maxRequestBodyBytes (413 beyond: readJson). */
  const json: MiddlewareHandler<EngineEnv> = async (c, next) => {
    c.set("body", await readJson(c.env.incoming));
    await next();
  };

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

  app.post("/v1/fetch", json, async (c) => {
    await fetchMedia(engine, c.get("body"), c.env.incoming, c.env.outgoing);
    return RESPONSE_ALREADY_SENT;
  });

  app.post("/v1/resolve", json, async (c) => c.json(await resolveTarget(engine, c.get("body"))));

  for (const type of JOB_TYPES) app.post(`/v1/jobs/${type}`, json, jobRoute(engine, type));

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
    const failure = err instanceof EngineError ? err : new EngineError("INTERNAL", "internal engine error");
    if (!(err instanceof EngineError)) log(`request failed: ${String(err)}`);
    // On the Node response: an answer before the body was read to its end (413) closes the connection.
    sendError(c.env.outgoing, failure);
    return RESPONSE_ALREADY_SENT;
  });

  return app;
}
