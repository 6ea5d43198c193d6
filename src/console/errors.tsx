import type { Context } from "hono";
import { pageError } from "../dashboard/errors";
import { ApiError } from "../errors/api-error";
import type { ConsoleEnv } from "./context";
import { consolePaths } from "./paths";
import { renderConsole } from "./render";

/** The console's error handler: the dashboard's readable error page (pageError) inside the console's layout. */
export function consoleError(err: Error, c: Context<ConsoleEnv>) {
  const { error, title, requestId, status } = pageError(err, {
    requestId: c.get("requestId"),
    url: c.req.url,
  });
  const signedIn = c.get("user") !== undefined;
  return renderConsole(
    c,
    { title, status },
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
