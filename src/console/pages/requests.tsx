import type { Hono } from "hono";
import { keyLabel } from "../../auth/token";
import { encodeCursor } from "../../http/cursor";
import { pagePosition } from "../../http/pagination";
import { listKeys } from "../../keys/service";
import { listRequests, REQUEST_LOG_LIMIT, STATUS_CLASSES } from "../../requests/log";
import { Pager, Table, Time } from "../../ui/components";
import { formatNumber } from "../../ui/format";
import { query } from "../../ui/query-string";
import type { ConsoleEnv } from "../context";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";

const PAGE_SIZE = 50;

export function registerRequestLog(app: Hono<ConsoleEnv>) {
  app.get("/requests", async (c) => {
    const db = c.get("db");
    const accountId = c.get("user").accountId;
    const statusClass = STATUS_CLASSES.find((s) => s === c.req.query("status"));
    const keys = await listKeys(db, accountId);
    // Only one of the account's own keys filters; anything else shows every key.
    const keyId = keys.find((k) => k.id === c.req.query("key"))?.id;
    const cursor = c.req.query("cursor");
    const { rows, hasNext } = await listRequests(c.env, accountId, {
      statusClass,
      keyId,
      ...pagePosition({ cursor, limit: PAGE_SIZE }),
    });
    const link = (params: { status?: string; key?: string; cursor?: string }) =>
      `${consolePaths.requests}${query(params)}`;
    const next = hasNext
      ? link({ status: statusClass, key: keyId, cursor: encodeCursor(rows.at(-1)!.id) })
      : undefined;
    return renderConsole(
      c,
      { title: "Request log", tab: "requests" },
      <>
        <h1>Request log</h1>
        <p class="muted">
          Your last {formatNumber(REQUEST_LOG_LIMIT)} API requests made with a key, newest first. Give the
          request id to support to trace one.
        </p>
        <section class="panel">
          <nav class="pills" aria-label="Status">
            <a href={link({ key: keyId })} aria-current={statusClass ? undefined : "true"}>
              all
            </a>
            {STATUS_CLASSES.map((s) => (
              <a href={link({ status: s, key: keyId })} aria-current={statusClass === s ? "true" : undefined}>
                {s}
              </a>
            ))}
          </nav>
          <nav class="pills" aria-label="Key">
            <a href={link({ status: statusClass })} aria-current={keyId ? undefined : "true"}>
              every key
            </a>
            {keys.map((k) => (
              <a
                href={link({ status: statusClass, key: k.id })}
                aria-current={keyId === k.id ? "true" : undefined}
                title={k.name || undefined}
              >
                <code>{keyLabel(k.id)}</code>
              </a>
            ))}
          </nav>
          {/* Seven columns with the key beside the route were wider than the card from 1280 px down, and the
              request id was cut off: the key goes under the request, and below 960 px the rows are cards. */}
          <Table
            wide
            empty="No requests match."
            columns={[
              { label: "Time" },
              { label: "Request" },
              { label: "Status", num: true },
              { label: "Duration", num: true },
              { label: "Error" },
              { label: "Request id" },
            ]}
            rows={rows.map((row) => ({
              id: row.id,
              cells: [
                <Time ms={row.createdAt} />,
                <span class="request">
                  <span class="nowrap">
                    <span>{row.method}</span>{" "}
                    {row.route ? <code>{row.route}</code> : <span class="muted">no route</span>}
                  </span>
                  <span class="muted small nowrap">
                    with <code>{keyLabel(row.keyId)}</code>
                  </span>
                </span>,
                String(row.status),
                `${formatNumber(row.durationMs)} ms`,
                row.errorCode ? <code>{row.errorCode}</code> : <span class="muted">—</span>,
                <code>{row.id}</code>,
              ],
            }))}
          />
          <Pager first={cursor ? link({ status: statusClass, key: keyId }) : undefined} next={next} />
        </section>
      </>,
    );
  });
}
