import { createMiddleware } from "hono/factory";
import { monotonicFactory } from "ulid";
import { getConfig } from "../config/config";
import { createDb } from "../db/client";
import type { AppEnv } from "./context";
import { Timing } from "./timing";

const nextId = monotonicFactory();

/** First middleware: request id, parsed config, database and timer; X-Request-Id on every response. */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const requestId = nextId();
  c.set("requestId", requestId);
  c.set("config", getConfig(c.env));
  c.set("db", createDb(c.env.DB));
  c.set("timing", new Timing());
  c.header("X-Request-Id", requestId);
  await next();
  c.res.headers.set("X-Request-Id", requestId);
});
