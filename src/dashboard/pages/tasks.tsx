import type { Hono } from "hono";
import type { TaskRow, TaskStatus } from "../../db/schema";
import { encodeCursor } from "../../http/cursor";
import { DEFAULT_PAGE_SIZE, pagePosition } from "../../http/pagination";
import { getTask, listTasks } from "../../tasks/query";
import { serializeTask, type TaskView } from "../../tasks/serialize";
import { isUlid } from "../../util/ulid";
import type { DashboardEnv } from "../context";
import { notFound } from "../errors";
import { loadAccount } from "../load";
import { paths, query } from "../paths";
import type { DeliveryWithAttempts } from "../queries";
import { taskDeliveries } from "../queries";
import { render } from "../render";
import { AccountHeader, Badge, Notice, Pager, Table, Time } from "../views/components";
import { formatNumber } from "../views/format";

const STATUSES: TaskStatus[] = ["queued", "processing", "succeeded", "failed", "canceled"];

export const TASK_STATUSES = STATUSES;

/** Links to the task list filtered by each status; `list` is the unfiltered list's path. */
export function StatusFilter(props: { list: string; status?: TaskStatus }) {
  const link = (status?: TaskStatus) => `${props.list}${query({ status })}`;
  return (
    <nav class="pills" aria-label="Status">
      <a href={link()} aria-current={props.status ? undefined : "true"}>
        all
      </a>
      {STATUSES.map((status) => (
        <a href={link(status)} aria-current={props.status === status ? "true" : undefined}>
          {status}
        </a>
      ))}
    </nav>
  );
}

export function TaskList(props: { rows: TaskRow[]; href: (taskId: string) => string }) {
  return (
    <Table
      empty="No tasks match."
      columns={[
        { label: "Task" },
        { label: "Type" },
        { label: "Status" },
        { label: "Created" },
        { label: "Completed" },
        { label: "Cost", num: true },
      ]}
      rows={props.rows.map((row) => ({
        id: row.id,
        cells: [
          <a href={props.href(row.id)}>
            <code>{row.id}</code>
          </a>,
          row.type,
          <Badge value={row.status} />,
          <Time ms={row.createdAt} />,
          <Time ms={row.completedAt} />,
          formatNumber(row.cost),
        ],
      }))}
    />
  );
}

const seconds = (value: number | undefined) => (value === undefined ? "—" : `${value.toFixed(3)} s`);

export function TaskFacts(props: { row: TaskRow; view: TaskView }) {
  const { row, view } = props;
  const events = row.webhookEvents
    ? (JSON.parse(row.webhookEvents) as string[]).join(", ")
    : "completed, failed";
  return (
    <section class="panel">
      <h2>Details</h2>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <Badge value={row.status} />{" "}
          {row.status === "processing" ? `${Math.round(view.progress * 100)} %` : ""}
        </dd>
        <dt>Type</dt>
        <dd>{row.type}</dd>
        <dt>Source URL</dt>
        <dd>
          <code>{row.sourceUrl}</code>
        </dd>
        <dt>Created by</dt>
        <dd>
          {row.source} · request <code>{row.requestId}</code>
        </dd>
        <dt>Cost</dt>
        <dd>
          {formatNumber(row.cost)} credit{row.cost === 1 ? "" : "s"} (reserved at creation)
        </dd>
        <dt>Created</dt>
        <dd>
          <Time ms={row.createdAt} />
        </dd>
        <dt>Started</dt>
        <dd>
          <Time ms={row.startedAt} />
        </dd>
        <dt>Completed</dt>
        <dd>
          <Time ms={row.completedAt} />
        </dd>
        <dt>Expires</dt>
        <dd>
          <Time ms={row.expiresAt} />
          {row.dataRemoved ? " (outputs removed)" : ""}
        </dd>
        <dt>Timing</dt>
        <dd>
          total {seconds(view.metrics.total_time)} · queued {seconds(view.metrics.queue_time)} · processing{" "}
          {seconds(view.metrics.processing_time)}
        </dd>
        <dt>Idempotency key</dt>
        <dd>{row.idempotencyKey ? <code>{row.idempotencyKey}</code> : <span class="muted">—</span>}</dd>
        <dt>Webhook</dt>
        <dd>
          {row.webhookUrl ? (
            <>
              <code>{row.webhookUrl}</code> <span class="muted">({events})</span>
            </>
          ) : (
            <span class="muted">none</span>
          )}
        </dd>
        <dt>Parameters</dt>
        <dd>
          <pre>{JSON.stringify(JSON.parse(row.params), null, 2)}</pre>
        </dd>
      </dl>
    </section>
  );
}

export function Outputs(props: { view: TaskView }) {
  const { view } = props;
  return (
    <section class="panel">
      <h2>Outputs</h2>
      {view.error ? (
        <Notice kind="error">
          <strong>{view.error.code}</strong>: {view.error.message}{" "}
          <span class="small">
            (request <code>{view.error.request_id}</code>)
          </span>
        </Notice>
      ) : null}
      {view.data_removed ? (
        <p class="muted">The outputs were removed at the end of their retention.</p>
      ) : null}
      <Table
        empty={
          view.status === "succeeded"
            ? "No outputs."
            : view.steps
              ? "Outputs appear as the steps succeed."
              : "Outputs appear when the task succeeds."
        }
        columns={[{ label: "Kind" }, { label: "File" }, { label: "Details" }]}
        rows={view.outputs.map(({ kind, url, ...rest }) => ({
          cells: [
            kind,
            <a href={url}>{decodeURIComponent(new URL(url).pathname.split("/").pop() ?? "file")}</a>,
            Object.keys(rest).length > 0 ? (
              Object.entries(rest)
                .map(([name, value]) => `${name.replace(/_/g, " ")} ${String(value)}`)
                .join(" · ")
            ) : (
              <span class="muted">—</span>
            ),
          ],
        }))}
      />
    </section>
  );
}

/** `a · b · c` of an object's fields, or a dash. */
const fieldsText = (fields: Record<string, unknown> | null) =>
  fields && Object.keys(fields).length > 0 ? (
    Object.entries(fields)
      .map(([name, value]) => `${name.replace(/_/g, " ")} ${String(value)}`)
      .join(" · ")
  ) : (
    <span class="muted">—</span>
  );

/** A pipeline's steps in order: each one's status, result (or error) and outputs. Nothing for other tasks. */
export function Steps(props: { view: TaskView }) {
  const { steps } = props.view;
  if (steps === null) return null;
  return (
    <section class="panel">
      <h2>Steps</h2>
      <Table
        empty="No steps."
        columns={[
          { label: "Step" },
          { label: "Operation" },
          { label: "Status" },
          { label: "Result" },
          { label: "Outputs" },
        ]}
        rows={steps.map((step) => ({
          cells: [
            <code>{step.name}</code>,
            step.type,
            step.status,
            step.error ? `${step.error.code}: ${step.error.message}` : fieldsText(step.result),
            step.outputs.length > 0 ? (
              step.outputs.map((output) => (
                <>
                  <a href={output.url}>
                    {decodeURIComponent(new URL(output.url).pathname.split("/").pop() ?? "file")}
                  </a>{" "}
                </>
              ))
            ) : (
              <span class="muted">—</span>
            ),
          ],
        }))}
      />
    </section>
  );
}

export function Deliveries(props: { deliveries: DeliveryWithAttempts[] }) {
  return (
    <section class="panel">
      <h2>Webhook deliveries</h2>
      {props.deliveries.length === 0 ? <p class="muted">No webhook deliveries for this task.</p> : null}
      {props.deliveries.map((delivery) => (
        <div class="delivery" data-delivery-id={delivery.id}>
          <h3>
            <Badge value={delivery.status} /> {delivery.event} → <code>{delivery.url}</code>
          </h3>
          <p class="muted small">
            webhook-id <code>{delivery.id}</code> · {delivery.attemptCount} attempt
            {delivery.attemptCount === 1 ? "" : "s"}
            {delivery.nextAttemptAt !== null && delivery.status === "pending" ? (
              <>
                {" "}
                · next <Time ms={delivery.nextAttemptAt} />
              </>
            ) : null}
          </p>
          <Table
            empty="Not attempted yet."
            columns={[
              { label: "#", num: true },
              { label: "Time" },
              { label: "HTTP status", num: true },
              { label: "Latency", num: true },
              { label: "Error" },
            ]}
            rows={delivery.attempts.map((attempt) => ({
              id: attempt.id,
              cells: [
                attempt.attempt,
                <Time ms={attempt.createdAt} />,
                attempt.statusCode ?? <span class="muted">no response</span>,
                `${formatNumber(attempt.latencyMs)} ms`,
                attempt.error ?? <span class="muted">—</span>,
              ],
            }))}
          />
        </div>
      ))}
    </section>
  );
}

export function registerTasks(app: Hono<DashboardEnv>) {
  app.get("/accounts/:accountId/tasks", async (c) => {
    const account = await loadAccount(c);
    const requested = c.req.query("status");
    const status = STATUSES.find((s) => s === requested);
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
