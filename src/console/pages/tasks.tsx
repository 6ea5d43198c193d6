import type { Context, Hono } from "hono";
import { encodeCursor } from "../../http/cursor";
import { DEFAULT_PAGE_SIZE, pagePosition } from "../../http/pagination";
import { getTask, listTasks } from "../../tasks/query";
import { serializeTask } from "../../tasks/serialize";
import { Notice, Pager, PostForm } from "../../ui/components";
import { notFound } from "../../ui/error-page";
import { query } from "../../ui/query-string";
import { Deliveries, Outputs, StatusFilter, Steps, TASK_STATUSES, TaskFacts, TaskList } from "../../ui/tasks";
import { isUlid } from "../../util/ulid";
import { taskDeliveries } from "../../webhooks/deliveries";
import type { ConsoleEnv } from "../context";
import { takeFlash } from "../flash";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";

/**
 * A task of the signed-in account with its webhook deliveries and attempts; another account's task (or a
 * malformed id) is not found. A resend that a limit (per task or per account) turned away comes back here with
 * the reason (a flash), shown once above the button.
 */
async function taskPage(c: Context<ConsoleEnv>, taskId: string) {
  // getTask is scoped to the account: another account's task is simply not found.
  const row = isUlid(taskId) ? await getTask(c.get("db"), c.get("user").accountId, taskId) : undefined;
  if (!row) throw notFound("This task");
  const [view, deliveries, flash] = await Promise.all([
    serializeTask(row, {
      origin: new URL(c.req.url).origin,
      fileSigningSecret: c.get("config").fileSigningSecret,
    }),
    taskDeliveries(c.get("db"), row.id),
    takeFlash(c),
  ]);
  const refused = flash?.kind === "resend-refused" && flash.taskId === row.id ? flash.message : undefined;
  return renderConsole(
    c,
    { title: `Task ${row.id}`, tab: "tasks" },
    <>
      <h1>
        Task <code>{row.id}</code>
      </h1>
      <div class="grid">
        <TaskFacts row={row} view={view} />
        <Outputs view={view} />
      </div>
      <Steps view={view} />
      {c.req.query("done") === "resent" ? (
        <Notice kind="ok">The last event was queued for delivery again; its attempts appear below.</Notice>
      ) : null}
      {refused ? <Notice kind="error">{refused}</Notice> : null}
      <Deliveries deliveries={deliveries} />
      {deliveries.length > 0 ? (
        <PostForm action={consolePaths.resend}>
          <input type="hidden" name="task_id" value={row.id} />
          <input type="hidden" name="from" value="task" />
          <button type="submit" class="secondary">
            Resend the last event
          </button>
        </PostForm>
      ) : null}
    </>,
  );
}

export function registerTaskPages(app: Hono<ConsoleEnv>) {
  app.get("/tasks", async (c) => {
    const requested = c.req.query("status");
    const status = TASK_STATUSES.find((s) => s === requested);
    const cursor = c.req.query("cursor");
    const { rows, hasNext } = await listTasks(c.get("db"), c.get("user").accountId, {
      status,
      ...pagePosition({ cursor, limit: DEFAULT_PAGE_SIZE }),
    });
    const next = hasNext
      ? `${consolePaths.tasks}${query({ status, cursor: encodeCursor(rows.at(-1)!.id) })}`
      : undefined;
    return renderConsole(
      c,
      { title: "Tasks", tab: "tasks" },
      <>
        <h1>Tasks</h1>
        <section class="panel">
          <StatusFilter list={consolePaths.tasks} status={status} />
          <TaskList rows={rows} href={consolePaths.task} />
          <Pager first={cursor ? `${consolePaths.tasks}${query({ status })}` : undefined} next={next} />
        </section>
      </>,
    );
  });

  app.get("/tasks/:taskId", (c) => taskPage(c, c.req.param("taskId")));
}
