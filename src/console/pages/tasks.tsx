import type { Hono } from "hono";
import {
  Deliveries,
  Outputs,
  StatusFilter,
  TASK_STATUSES,
  TaskFacts,
  TaskList,
} from "../../dashboard/pages/tasks";
import { query } from "../../dashboard/paths";
import { taskDeliveries } from "../../dashboard/queries";
import { Notice, Pager, PostForm } from "../../dashboard/views/components";
import { encodeCursor } from "../../http/cursor";
import { DEFAULT_PAGE_SIZE, pagePosition } from "../../http/pagination";
import { getTask, listTasks } from "../../tasks/query";
import { serializeTask } from "../../tasks/serialize";
import { isUlid } from "../../util/ulid";
import type { ConsoleEnv } from "../context";
import { notFound } from "../errors";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";

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

  app.get("/tasks/:taskId", async (c) => {
    const taskId = c.req.param("taskId");
    // getTask is scoped to the account: another account's task is simply not found.
    const row = isUlid(taskId) ? await getTask(c.get("db"), c.get("user").accountId, taskId) : undefined;
    if (!row) throw notFound("This task");
    const [view, deliveries] = await Promise.all([
      serializeTask(row, {
        origin: new URL(c.req.url).origin,
        fileSigningSecret: c.get("config").fileSigningSecret,
      }),
      taskDeliveries(c.get("db"), row.id),
    ]);
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
        {c.req.query("done") === "resent" ? (
          <Notice kind="ok">The last event was queued for delivery again; its attempts appear below.</Notice>
        ) : null}
        <Deliveries deliveries={deliveries} />
        {deliveries.length > 0 ? (
          <PostForm action={consolePaths.resend}>
            <input type="hidden" name="task_id" value={row.id} />
            <button type="submit" class="secondary">
              Resend the last event
            </button>
          </PostForm>
        ) : null}
      </>,
    );
  });
}
