import type { Hono } from "hono";
import { getAccount } from "../../accounts/service";
import { TaskList } from "../../dashboard/pages/tasks";
import { formatNumber } from "../../dashboard/views/format";
import { listTasks } from "../../tasks/query";
import type { ConsoleEnv } from "../context";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";
import { monthStart, usageSince } from "../usage";
import { UsageChart } from "../views/usage-chart";

export function registerOverview(app: Hono<ConsoleEnv>) {
  app.get("/", async (c) => {
    const db = c.get("db");
    const accountId = c.get("user").accountId;
    const [account, usage, recent] = await Promise.all([
      getAccount(db, accountId),
      usageSince(db, accountId, monthStart(Date.now())),
      listTasks(db, accountId, { limit: 5 }),
    ]);
    return renderConsole(
      c,
      { title: "Overview", tab: "overview" },
      <>
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
