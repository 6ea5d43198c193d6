import { bodyLimit } from "hono/body-limit";
import { every } from "hono/combine";
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors/api-error";
import type { AppEnv } from "./context";

export const MAX_JSON_BODY_BYTES = 1024 * 1024;

const WITH_BODY = new Set(["POST", "PUT", "PATCH", "DELETE"]);

function hasBody(req: Request) {
  if (req.body === null) return false;
  const length = req.headers.get("content-length");
  return length === null || Number(length) > 0;
}

function isJson(contentType: string | undefined) {
  const mediaType = contentType?.split(";")[0]?.trim().toLowerCase();
  return mediaType === "application/json" || (mediaType?.endsWith("+json") ?? false);
}

const jsonOnly = createMiddleware<AppEnv>(async (c, next) => {
  if (!WITH_BODY.has(c.req.method) || !hasBody(c.req.raw)) return next();
  if (!isJson(c.req.header("content-type"))) {
    throw new ApiError("CONTENT_TYPE_UNSUPPORTED", "Request bodies must be sent as application/json.");
  }
  try {
    await c.req.json();
  } catch (cause) {
    if (cause instanceof ApiError) throw cause;
    throw new ApiError("VALIDATION_INVALID_ARGUMENT", "The request body is not valid JSON.", {
      errors: [{ code: "invalid_json", field: "body", message: "The request body is not valid JSON." }],
      cause,
    });
  }
  return next();
});

/**
 * Request bodies: at most 1 MiB (checked from Content-Length first, then while streaming, so an
 * unbounded body is never buffered), JSON only (415 otherwise), parsed once (400 when malformed).
 * A POST without a body (cancel) passes.
 */
export const bodyGuard = every(
  bodyLimit({
    maxSize: MAX_JSON_BODY_BYTES,
    onError: () => {
      throw new ApiError("REQUEST_BODY_TOO_LARGE");
    },
  }),
  jsonOnly,
);
