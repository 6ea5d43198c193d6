import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError } from "../errors/api-error";
import { ERROR_CODES } from "../errors/codes";

const TITLES: Partial<Record<ApiError["code"], string>> = {
  PERMISSION_FORBIDDEN: "Form refused",
  RESOURCE_NOT_FOUND: "Not found",
  VALIDATION_INVALID_ARGUMENT: "That request is not valid",
};

/**
 * What an error page (the dashboard's, the console's) may say about an error: one the code anticipated keeps its
 * public detail; anything else is logged (like the API's 500s) and becomes a friendly message with the request
 * id. Never a stack.
 */
function pageError(err: Error, request: { requestId: string; url: string }) {
  const { requestId } = request;
  let error: ApiError;
  if (err instanceof ApiError) error = err;
  else if (err instanceof HTTPException && err.status === 413) error = new ApiError("REQUEST_BODY_TOO_LARGE");
  else {
    console.error(
      JSON.stringify({
        level: "error",
        request_id: requestId,
        path: new URL(request.url).pathname,
        error: err.name,
        message: err.message,
        stack: err.stack,
      }),
    );
    error = new ApiError(
      "INTERNAL",
      "Something went wrong on our side. Reload the page to see what was saved; if it keeps happening, quote the request id below.",
    );
  }
  const title = TITLES[error.code] ?? ERROR_CODES[error.code].title;
  return { error, title, requestId, status: error.status as ContentfulStatusCode };
}

/** The readable 404 of a page: "This task does not exist." */
export function notFound(what: string) {
  return new ApiError("RESOURCE_NOT_FOUND", `${what} does not exist.`);
}

/** The body of an error page: what went wrong, the request id to quote, and the way back. */
function ErrorPanel(props: {
  title: string;
  detail: string;
  requestId: string;
  back: { href: string; label: string };
}) {
  return (
    <div class="panel">
      <h1>{props.title}</h1>
      <p>{props.detail}</p>
      <p class="muted small">
        Request id <code>{props.requestId}</code>
      </p>
      <p>
        <a href={props.back.href}>{props.back.label}</a>
      </p>
    </div>
  );
}

/**
 * An error as a page's body (pageError's verdict in an ErrorPanel), with its title and status; `back` is where
 * the reader goes from there.
 */
export function errorPage(
  err: Error,
  request: { requestId: string; url: string },
  back: { href: string; label: string },
) {
  const { error, title, requestId, status } = pageError(err, request);
  return {
    title,
    status,
    body: <ErrorPanel title={title} detail={error.detail} requestId={requestId} back={back} />,
  };
}
