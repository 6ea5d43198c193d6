/**
 * Request bodies validated by their @p6/contract/wire schema (@hono/zod-validator): a refusal is the engine's
 * 400 naming the first wrong field, as its routes always answered (`params.<key>`, `job_id`, `body` for a body
 * that is no JSON object). The body is read within LIMITS.maxRequestBodyBytes (hono/body-limit; 413 beyond,
 * answered before the rest is read: app.ts onError closes the connection then).
 */
import { zValidator } from "@hono/zod-validator";
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { z } from "zod";
import { EngineError, invalid } from "../protocol.ts";
import { describeBytes, LIMITS } from "../security/limits.ts";

/** The first issue as the engine's refusal; an unknown key is named the way the Worker names it. */
export function issueError(error: z.core.$ZodError): EngineError {
  const issue = error.issues[0]!;
  const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]!] : issue.path;
  const field = path
    .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
    .join("")
    .slice(1);
  if (issue.code === "unrecognized_keys") return invalid(field, `Unknown field "${issue.keys[0]}".`);
  if (field === "") return invalid("body", "the request body must be a JSON object");
  return invalid(field, issue.message);
}

const limit = bodyLimit({
  maxSize: LIMITS.maxRequestBodyBytes,
  onError: () => {
    throw new EngineError(
      "REQUEST_BODY_TOO_LARGE",
      `the request body exceeds ${describeBytes(LIMITS.maxRequestBodyBytes)}`,
    );
  },
});

/**
 * The request as a standard Request that says its body is JSON: every body of the protocol is JSON, whatever
 * its Content-Type says (the engine always read it so), and Hono's validator reads a body as JSON only when
 * the header says so. A new Request, because @hono/node-server's own (its global objects not overridden,
 * server.ts) cannot be copied by the standard constructor, as hono/body-limit does with a chunked body.
 */
const asJson: MiddlewareHandler = async (c, next) => {
  const headers = new Headers(c.req.raw.headers);
  headers.set("content-type", "application/json");
  // duplex: a streamed body is taken only so.
  c.req.raw = new Request(c.req.url, {
    method: c.req.method,
    headers,
    body: c.req.raw.body,
    duplex: "half",
  } as RequestInit);
  await next();
};

/** The middleware that validates a JSON body by `schema`; the handler reads it as c.req.valid("json"). */
export const jsonBody = <S extends z.ZodType>(schema: S) =>
  [
    asJson,
    limit,
    zValidator("json", schema, (result) => {
      if (!result.success) throw issueError(result.error);
    }),
  ] as const;
