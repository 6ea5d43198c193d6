import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError } from "../errors/api-error";
import { ERROR_CODES } from "../errors/codes";
import type { ConsoleEnv } from "./context";
import { consolePaths } from "./paths";
import { renderConsole } from "./render";

const TITLES: Partial<Record<ApiError["code"], string>> = {
  PERMISSION_FORBIDDEN: "Form refused",
  RESOURCE_NOT_FOUND: "Not found",
  VALIDATION_INVALID_ARGUMENT: "That request is not valid",
};

/**
 * Anticipated errors become a readable page with their public detail; anything else is logged and shown as a
 * friendly page with the request id. Never a stack.
 */
export function consoleError(err: Error, c: Context<ConsoleEnv>) {
  const requestId = c.get("requestId");
  let error: ApiError;
  if (err instanceof ApiError) error = err;
  else if (err instanceof HTTPException && err.status === 413) error = new ApiError("REQUEST_BODY_TOO_LARGE");
  else {
    console.error(
      JSON.stringify({
        level: "error",
        request_id: requestId,
        path: new URL(c.req.url).pathname,
        error: err.name,
        message: err.message,
        stack: err.stack,
      }),
    );
    error = new ApiError(
      "INTERNAL",
      "Something went wrong on our side. If it keeps happening, quote the request id.",
    );
  }
  const title = TITLES[error.code] ?? ERROR_CODES[error.code].title;
  const signedIn = c.get("user") !== undefined;
  return renderConsole(
    c,
    { title, status: error.status as ContentfulStatusCode },
    <div class="panel">
      <h1>{title}</h1>
      <p>{error.detail}</p>
      <p class="muted small">
        Request id <code>{requestId}</code>
      </p>
      <p>
        <a href={signedIn ? consolePaths.overview : consolePaths.signIn}>
          {signedIn ? "Back to the overview" : "Sign in"}
        </a>
      </p>
    </div>,
  );
}

export function notFound(what: string) {
  return new ApiError("RESOURCE_NOT_FOUND", `${what} does not exist.`);
}
