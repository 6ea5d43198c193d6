/**
 * A task as the operator dashboard and the customer console show it: the list with its status filter, the
 * details, outputs, pipeline steps and webhook deliveries of one task.
 */
import type { TaskRow, TaskStatus } from "../db/schema";
import type { TaskView } from "../tasks/serialize";
import type { DeliveryWithAttempts } from "../webhooks/deliveries";
import { Badge, Notice, Table, Time } from "./components";
import { formatBytes, formatNumber } from "./format";
import { query } from "./query-string";

export const TASK_STATUSES: TaskStatus[] = ["queued", "processing", "succeeded", "failed", "canceled"];

/** Links to the task list filtered by each status; `list` is the unfiltered list's path. */
export function StatusFilter(props: { list: string; status?: TaskStatus }) {
  const link = (status?: TaskStatus) => `${props.list}${query({ status })}`;
  return (
    <nav class="pills" aria-label="Status">
      <a href={link()} aria-current={props.status ? undefined : "true"}>
        all
      </a>
      {TASK_STATUSES.map((status) => (
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

const inSeconds = (value: number) => `${Number(value.toFixed(3))} s`;
const num = (value: unknown) => (typeof value === "number" ? value : null);

/**
 * How each result field of an operation (its result schema in @p6/contract) reads on a page: a size in binary
 * units, the dimensions together, times in seconds. A field not listed reads as "name value"; null: said by
 * another field (height with width, end with start).
 */
const RESULT_FIELDS: Record<string, (value: unknown, all: Record<string, unknown>) => string | null> = {
  format: (value) => String(value),
  size_bytes: (value) => (num(value) === null ? null : formatBytes(value as number)),
  width: (value, all) => (num(all.height) === null ? `width ${value} px` : `${value} × ${all.height} px`),
  height: (value, all) => (all.width === undefined ? `height ${value} px` : null),
  duration: (value) => (num(value) === null ? null : `duration ${inSeconds(value as number)}`),
  durationSec: (value) => (num(value) === null ? null : `duration ${inSeconds(value as number)}`),
  start: (value, all) =>
    num(value) === null
      ? null
      : `from ${inSeconds(value as number)}${num(all.end) === null ? "" : ` to ${inSeconds(all.end as number)}`}`,
  end: (value, all) =>
    all.start !== undefined || num(value) === null ? null : `to ${inSeconds(value as number)}`,
  copied: (value) => (value ? "stream-copied" : "re-encoded"),
  fps: (value) => `${value} fps`,
  hasAlpha: (value) => (value ? "with alpha" : "no alpha"),
};

/** An operation's result as one line ("png · 947 B · 320 × 200 px"), or a dash when it has none. */
function resultText(fields: Record<string, unknown> | null) {
  const facts = Object.entries(fields ?? {})
    .map(([name, value]) => {
      const read = RESULT_FIELDS[name];
      return read ? read(value, fields!) : `${name.replace(/_/g, " ")} ${String(value)}`;
    })
    .filter((fact) => fact !== null);
  return facts.length > 0 ? facts.join(" · ") : <span class="muted">—</span>;
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
            resultText(rest),
          ],
        }))}
      />
    </section>
  );
}

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
            step.error ? `${step.error.code}: ${step.error.message}` : resultText(step.result),
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
