import type { Context } from "hono";
import { ErrorPanel, pageError } from "../ui/error-page";
import type { ConsoleEnv } from "./context";
import { consolePaths } from "./paths";
import { renderConsole } from "./render";

/** The console's error handler: a readable page (pageError) inside the console's layout. */
export function consoleError(err: Error, c: Context<ConsoleEnv>) {
  const { error, title, requestId, status } = pageError(err, {
    requestId: c.get("requestId"),
    url: c.req.url,
  });
  const signedIn = c.get("user") !== undefined;
  return renderConsole(
    c,
    { title, status },
    <ErrorPanel
      title={title}
      detail={error.detail}
      requestId={requestId}
      back={
        signedIn
          ? { href: consolePaths.overview, label: "Back to the overview" }
          : { href: consolePaths.signIn, label: "Sign in" }
      }
    />,
  );
}
