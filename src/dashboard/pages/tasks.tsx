import type { Hono } from "hono";
import { encodeCursor } from "../../http/cursor";
import { DEFAULT_PAGE_SIZE, pagePosition } from "../../http/pagination";
import { getTask, listTasks } from "../../tasks/query";
import { serializeTask } from "../../tasks/serialize";
import { Pager } from "../../ui/components";
import { notFound } from "../../ui/error-page";
import { query } from "../../ui/query-string";
import { Deliveries, Outputs, StatusFilter, Steps, TASK_STATUSES, TaskFacts, TaskList } from "../../ui/tasks";
import { isUlid } from "../../util/ulid";
import { taskDeliveries } from "../../webhooks/deliveries";
import type { DashboardEnv } from "../context";
import { loadAccount } from "../load";
import { paths } from "../paths";
import { render } from "../render";
import { AccountHeader } from "../views/account-header";

export function registerTasks(app: Hono<DashboardEnv>) {
  app.get("/accounts/:accountId/tasks", async (c) => {
    const account = await loadAccount(c);
    const requested = c.req.query("status");
    const status = TASK_STATUSES.find((s) => s === requested);
    const cursor = c.req.query("cursor");
    const { rows, hasNext } = await listTasks(c.get("db"), account.id, {
      status,
      ...pagePosition({ cursor, limit: DEFAULT_PAGE_SIZE }),
    });
    const next = hasNext
      ? `${paths.tasks(account.id)}${query({ status, cursor: encodeCursor(rows.at(-1)!.id) })}`
      : undefined;
    return render(
      c,
      `Tasks · ${account.name}`,
      <>
        <AccountHeader account={account} tab="tasks" />
        <section class="panel">
          <StatusFilter list={paths.tasks(account.id)} status={status} />
          <TaskList rows={rows} href={(taskId) => paths.task(account.id, taskId)} />
          <Pager first={cursor ? `${paths.tasks(account.id)}${query({ status })}` : undefined} next={next} />
        </section>
      </>,
    );
  });

  app.get("/accounts/:accountId/tasks/:taskId", async (c) => {
    const account = await loadAccount(c);
    const taskId = c.req.param("taskId");
    const row = isUlid(taskId) ? await getTask(c.get("db"), account.id, taskId) : undefined;
    if (!row) throw notFound("This task");
    const origin = new URL(c.req.url).origin;
    const [view, deliveries] = await Promise.all([
      serializeTask(row, { origin, fileSigningSecret: c.get("config").fileSigningSecret }),
      taskDeliveries(c.get("db"), row.id),
    ]);
    return render(
      c,
      `Task ${row.id}`,
      <>
        <AccountHeader account={account} tab="tasks" />
        <h2>
          Task <code>{row.id}</code>
        </h2>
        <div class="grid">
          <TaskFacts row={row} view={view} />
          <Outputs view={view} />
        </div>
        <Steps view={view} />
        <Deliveries deliveries={deliveries} />
      </>,
    );
  });
}
