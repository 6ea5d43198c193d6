import type { LedgerRow } from "../db/schema";
import { Badge, Pager, Table, Time } from "./components";
import { formatNumber, formatSigned } from "./format";

/** An account's credit ledger (dashboard and console), newest first; `first` is the first page's path (shown when on a later page). */
export function Ledger(props: {
  rows: LedgerRow[];
  taskHref: (taskId: string) => string;
  first?: string;
  next?: string;
}) {
  return (
    <section class="panel">
      <h2>Ledger</h2>
      <Table
        empty="No ledger entries yet."
        columns={[
          { label: "Time" },
          { label: "Kind" },
          { label: "Amount", num: true },
          { label: "Balance after", num: true },
          { label: "Reason" },
          { label: "Task" },
          { label: "Request id" },
        ]}
        rows={props.rows.map((row) => ({
          id: row.id,
          cells: [
            <Time ms={row.createdAt} />,
            <Badge value={row.kind} />,
            formatSigned(row.amount),
            formatNumber(row.balanceAfter),
            row.reason ?? <span class="muted">—</span>,
            row.taskId ? (
              <a href={props.taskHref(row.taskId)}>
                <code>{row.taskId}</code>
              </a>
            ) : (
              <span class="muted">—</span>
            ),
            row.requestId ? <code>{row.requestId}</code> : <span class="muted">—</span>,
          ],
        }))}
      />
      <Pager first={props.first} next={props.next} />
    </section>
  );
}
