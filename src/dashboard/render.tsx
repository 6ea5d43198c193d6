import type { Context } from "hono";
import { html } from "hono/html";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { PageContext } from "../ui/components";
import type { DashboardEnv } from "./context";
import { Layout } from "./views/layout";

/** Renders a page inside the layout, with the request's CSRF token and CSP nonce available to every form. */
export function render(
  c: Context<DashboardEnv>,
  title: string,
  body: Child,
  status: ContentfulStatusCode = 200,
) {
  const value = {
    csrf: c.get("csrf") ?? "",
    nonce: c.get("nonce"),
    signedIn: c.get("session") !== undefined,
  };
  const page = (
    <PageContext.Provider value={value}>
      <Layout title={title}>{body}</Layout>
    </PageContext.Provider>
  );
  // Without the doctype a browser renders in quirks mode.
  return c.html(html`<!doctype html>${page}`, status);
}
