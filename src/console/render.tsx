import type { Context } from "hono";
import { html } from "hono/html";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { PageContext } from "../ui/components";
import type { ConsoleEnv } from "./context";
import { ConsoleLayout, type ConsoleTab } from "./views/layout";

/** Renders a console page with the request's CSRF token and CSP nonce available to every form. */
export function renderConsole(
  c: Context<ConsoleEnv>,
  page: { title: string; tab?: ConsoleTab; status?: ContentfulStatusCode },
  body: Child,
) {
  const user = c.get("user");
  const value = { csrf: c.get("csrf") ?? "", nonce: c.get("nonce"), signedIn: user !== undefined };
  const document = (
    <PageContext.Provider value={value}>
      <ConsoleLayout title={page.title} tab={page.tab} email={user?.email}>
        {body}
      </ConsoleLayout>
    </PageContext.Provider>
  );
  return c.html(html`<!doctype html>${document}`, page.status ?? 200);
}
