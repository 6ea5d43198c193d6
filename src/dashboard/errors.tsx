import type { Context } from "hono";
import { errorPage } from "../ui/error-page";
import type { DashboardEnv } from "./context";
import { paths } from "./paths";
import { render } from "./render";

/** The dashboard's error handler: a readable page (errorPage) inside the dashboard's layout. */
export function dashboardError(err: Error, c: Context<DashboardEnv>) {
  const back =
    c.get("session") !== undefined
      ? { href: paths.accounts, label: "Back to the accounts" }
      : { href: paths.login, label: "Sign in" };
  const page = errorPage(err, { requestId: c.get("requestId"), url: c.req.url }, back);
  return render(c, page.title, page.body, page.status);
}
