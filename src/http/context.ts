import type { TimingVariables } from "hono/timing";
import type { Config } from "../config/config";
import type { Db } from "../db/client";
import type { TaskRow } from "../db/schema";
import type { Timing } from "./timing";

/** What the API key middleware establishes for the rest of the request. */
export type Principal = {
  keyId: string;
  accountId: string;
  scopes: ReadonlySet<"read" | "write">;
};

/** The typed context every handler sees: bindings plus per-request services, built once per request. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    config: Config;
    db: Db;
    timing: Timing;
    principal: Principal;
    /** GET /v1/tasks/{id}: the row read while the key is checked (routes/tasks/get.ts taskReadAhead). */
    taskRead?: Promise<TaskRow | undefined>;
  } & TimingVariables;
};
