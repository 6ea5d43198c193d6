import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "../http/context";
import { ApiError } from "./api-error";
import { errorTypeBase, PROBLEM_JSON, problemBody } from "./problem";

/** Builds the problem+json response of an ApiError within a request. */
export function problemResponse(c: Context<AppEnv>, error: ApiError): Response {
  const requestId = c.get("requestId");
  const body = problemBody(error, {
    typeBase: errorTypeBase(c.get("config")?.errorTypeBase, c.req.url),
    instance: new URL(c.req.url).pathname,
    requestId,
  });
  const headers = new Headers(c.res?.headers);
  headers.delete("content-length");
  headers.set("Content-Type", PROBLEM_JSON);
  if (requestId) headers.set("X-Request-Id", requestId);
  for (const [name, value] of Object.entries(error.headers)) headers.set(name, value);
  return new Response(JSON.stringify(body), { status: error.status, headers });
}

/** Turns anything thrown into problem+json; unknown errors become a logged 500 that leaks nothing. */
export function onError(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof ApiError) return problemResponse(c, err);
  if (err instanceof HTTPException) return problemResponse(c, fromHttpException(err));
  console.error(
    JSON.stringify({
      level: "error",
      request_id: c.get("requestId"),
      path: new URL(c.req.url).pathname,
      error: err.name,
      message: err.message,
      stack: err.stack,
    }),
  );
  return problemResponse(c, new ApiError("INTERNAL"));
}

function fromHttpException(err: HTTPException): ApiError {
  switch (err.status) {
    case 400:
      return new ApiError("VALIDATION_INVALID_ARGUMENT", "The request body is not valid JSON.", {
        errors: [{ code: "invalid_json", field: "body", message: "The request body is not valid JSON." }],
      });
    case 413:
      return new ApiError("REQUEST_BODY_TOO_LARGE");
    case 415:
      return new ApiError("CONTENT_TYPE_UNSUPPORTED", "Request bodies must be application/json.");
    default:
      return new ApiError("INTERNAL");
  }
}
