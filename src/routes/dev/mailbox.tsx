import type { OpenAPIHono } from "@hono/zod-openapi";
import { type Context, Hono } from "hono";
import { html } from "hono/html";
import type { Child } from "hono/jsx";
import { ApiError } from "../../errors/api-error";
import type { AppEnv } from "../../http/context";
import { listMailbox, readMailbox, type StoredMail } from "../../mail/mailbox";
import { PageContext, Table } from "../../ui/components";
import { Frame } from "../../ui/frame";
import { securityHeaders } from "../../ui/security-headers";

export const MAILBOX = "/dev/mailbox";
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

type DevEnv = { Bindings: Env; Variables: AppEnv["Variables"] & { nonce: string } };
type Ctx = Context<DevEnv>;

/** The mailbox exists only with MAIL_TRANSPORT=mailbox and only for a loopback host; elsewhere it is a 404. */
function open(c: Ctx) {
  if (c.get("config").mailTransport !== "mailbox" || !LOOPBACK.has(new URL(c.req.url).hostname)) {
    throw new ApiError("RESOURCE_NOT_FOUND", `No resource at ${new URL(c.req.url).pathname}.`);
  }
}

function page(c: Ctx, title: string, body: Child) {
  const value = { csrf: "", nonce: c.get("nonce"), signedIn: false };
  return c.html(
    html`<!doctype html>${(
      <PageContext.Provider value={value}>
        <Frame title={title} brand="p6 dev mailbox" home={MAILBOX} signOut={MAILBOX}>
          {body}
        </Frame>
      </PageContext.Provider>
    )}`,
  );
}

/** The plain-text body with its links clickable (the text is escaped by JSX; only http(s) URLs become links). */
function Body(props: { text: string }) {
  const parts = props.text.split(/(https?:\/\/[^\s]+)/g);
  return (
    <pre class="mail">
      {parts.map((part) => (/^https?:\/\//.test(part) ? <a href={part}>{part}</a> : part))}
    </pre>
  );
}

/**
 * The local mailbox of `npm run dev` (docs/console.md "Mail"): every message the console sent, newest first,
 * and each one's text with its link. Never in production: a deployed Worker sends through Cloudflare.
 */
export function registerDevMailbox(app: OpenAPIHono<AppEnv>) {
  const dev = new Hono<DevEnv>();
  // The pages' own CSP with a nonce for the stylesheet, as the dashboard's and the console's.
  dev.use("*", securityHeaders);
  dev.get("/mailbox", async (c) => {
    open(c);
    const to = c.req.query("to")?.trim().toLowerCase() || undefined;
    const mails = await listMailbox(c.env, { to, limit: 100 });
    return page(
      c,
      "Mailbox",
      <>
        <h1>Mailbox</h1>
        <p class="muted">
          What the console mailed under <code>npm run dev</code> (MAIL_TRANSPORT=mailbox), newest first; kept
          in the local R2 bucket in P6_STATE_DIR.
        </p>
        <section class="panel">
          <Table
            columns={[{ label: "Sent" }, { label: "To" }, { label: "Subject" }]}
            rows={mails.map((m: StoredMail) => ({
              id: m.id,
              cells: [
                m.sentAt.replace("T", " ").slice(0, 19),
                <span class="anywhere">{m.to}</span>,
                <a href={`${MAILBOX}/${m.id}`}>{m.subject}</a>,
              ],
            }))}
            empty="No mail yet."
          />
        </section>
      </>,
    );
  });

  dev.get("/mailbox/:id", async (c) => {
    open(c);
    const mail = await readMailbox(c.env, c.req.param("id"));
    if (!mail) throw new ApiError("RESOURCE_NOT_FOUND", "No such mail in the mailbox.");
    return page(
      c,
      mail.subject,
      <>
        <p>
          <a href={MAILBOX}>All mail</a>
        </p>
        <section class="panel">
          <h1>{mail.subject}</h1>
          <p class="muted small">
            From {mail.from} to {mail.to}, {mail.sentAt}
          </p>
          <Body text={mail.text} />
        </section>
      </>,
    );
  });
  app.route("/dev", dev);
}
