import type { Context } from "hono";
import { ErrorPanel, pageError } from "../ui/error-page";
import type { DashboardEnv } from "./context";
import { paths } from "./paths";
import { render } from "./render";

/** The dashboard's error handler: a readable page (pageError) inside the dashboard's layout. */
export function dashboardError(err: Error, c: Context<DashboardEnv>) {
  const { error, title, requestId, status } = pageError(err, {
    requestId: c.get("requestId"),
    url: c.req.url,
  });
  const signedIn = c.get("session") !== undefined;
  return render(
    c,
    title,
    <ErrorPanel
      title={title}
      detail={error.detail}
      requestId={requestId}
      back={
        signedIn
          ? { href: paths.accounts, label: "Back to the accounts" }
          : { href: paths.login, label: "Sign in" }
      }
    />,
    status,
  );
}
