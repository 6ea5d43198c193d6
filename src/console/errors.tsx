import type { Context } from "hono";
import { errorPage } from "../ui/error-page";
import type { ConsoleEnv } from "./context";
import { consolePaths } from "./paths";
import { renderConsole } from "./render";

/** The console's error handler: a readable page (errorPage) inside the console's layout. */
export function consoleError(err: Error, c: Context<ConsoleEnv>) {
  const back =
    c.get("user") !== undefined
      ? { href: consolePaths.overview, label: "Back to the overview" }
      : { href: consolePaths.signIn, label: "Sign in" };
  const page = errorPage(err, { requestId: c.get("requestId"), url: c.req.url }, back);
  return renderConsole(c, { title: page.title, status: page.status }, page.body);
}
