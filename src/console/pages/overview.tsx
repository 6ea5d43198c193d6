import type { Hono } from "hono";
import { getAccount } from "../../accounts/service";
import type { UserRow } from "../../db/schema";
import { listTasks } from "../../tasks/query";
import { Notice, PostForm } from "../../ui/components";
import { formatBytes, formatNumber } from "../../ui/format";
import { TaskList } from "../../ui/tasks";
import { quotaUsage } from "../../uploads/quota";
import type { ConsoleEnv } from "../context";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";
import { monthStart, usageSince } from "../usage";
import { UsageChart } from "../views/usage-chart";

/** Until the email is verified: what waits for it, and a button for a new link (3 an hour). */
function VerifyBanner(props: { user: UserRow; mail: string | undefined }) {
  if (props.user.emailVerifiedAt !== null) return null;
  const wait = /^wait-(\d{1,3})$/.exec(props.mail ?? "")?.[1];
  return (
    <section class="panel" id="verify-banner">
      <h2>Verify your email</h2>
      {props.mail === "sent" ? <Notice kind="ok">A new link is on its way.</Notice> : null}
      {wait ? (
        <Notice kind="error">
          Three links were sent in the last hour. Try again in {wait} minute{wait === "1" ? "" : "s"}.
        </Notice>
      ) : null}
      <p>
        We sent a link to <strong class="anywhere">{props.user.email}</strong>.{" "}
        {props.user.pendingCredits > 0
          ? `Your ${formatNumber(props.user.pendingCredits)} sign-up credits are added once it is verified.`
          : "Verifying proves the address is yours."}{" "}
        The link works for 24 hours.
      </p>
      <PostForm action={consolePaths.resendVerification}>
        <button type="submit" class="secondary">
          Send a new link
        </button>
      </PostForm>
    </section>
  );
}

export function registerOverview(app: Hono<ConsoleEnv>) {
  app.get("/", async (c) => {
    const db = c.get("db");
    const accountId = c.get("user").accountId;
    const [account, usage, recent, uploads] = await Promise.all([
      getAccount(db, accountId),
      usageSince(db, accountId, monthStart(Date.now())),
      listTasks(db, accountId, { limit: 5 }),
      quotaUsage(db, accountId, Date.now()),
    ]);
    const limits = c.get("config").uploadQuota;
    return renderConsole(
      c,
      { title: "Overview", tab: "overview" },
      <>
        <VerifyBanner user={c.get("user")} mail={c.req.query("mail")} />
        <div class="grid">
          <section class="panel">
            <h2>Balance</h2>
            <p class="big" data-balance>
              {formatNumber(account?.credits ?? 0)}
            </p>
            <p class="muted small">
              Credits. <a href={consolePaths.credits}>Ledger</a>
            </p>
          </section>
          <section class="panel">
            <h2>This month</h2>
            <UsageChart usage={usage} />
          </section>
          <section class="panel">
            <h2>Uploads</h2>
            <p class="big" data-upload-bytes>
              {formatBytes(uploads.storedBytes)}
            </p>
            <p class="muted small">
              Stored of {formatBytes(limits.maxStoredBytes)}; {formatNumber(uploads.incomplete)} of{" "}
              {formatNumber(limits.maxIncomplete)} incomplete at once.{" "}
              <a href={consolePaths.uploads}>Uploads</a>
            </p>
          </section>
        </div>
        <section class="panel">
          <h2>Recent tasks</h2>
          <TaskList rows={recent.rows} href={consolePaths.task} />
          <p>
            <a href={consolePaths.tasks}>All tasks</a>
          </p>
        </section>
      </>,
    );
  });
}
