import type { Hono } from "hono";
import { Table } from "../../ui/components";
import { formatNumber } from "../../ui/format";
import { usageByDay } from "../../usage/query";
import type { ConsoleEnv } from "../context";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";
import { DailyUsageChart, operationColours } from "../views/daily-usage-chart";

const DAY_MS = 86_400_000;
/** The ranges offered, in days ending today (UTC); 90 stays within GET /v1/usage's 92-day limit. */
const RANGES = [7, 30, 90] as const;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function Swatch(props: { colour: string | undefined }) {
  return (
    <svg width="12" height="12" aria-hidden="true" class="swatch">
      <rect width="12" height="12" rx="2" fill={props.colour} />
    </svg>
  );
}

/**
 * Billed work per UTC day and operation, the numbers GET /v1/usage answers (the same `usageByDay` over the
 * ledger): a stacked bar chart per day, the totals per operation (the chart's legend), and every day's rows.
 */
export function registerUsagePage(app: Hono<ConsoleEnv>) {
  app.get("/usage", async (c) => {
    const days = RANGES.find((r) => String(r) === c.req.query("days")) ?? 30;
    const to = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const from = to - (days - 1) * DAY_MS;
    const rows = await usageByDay(c.get("db"), c.get("user").accountId, from, to + DAY_MS);
    const dates = Array.from({ length: days }, (_, i) => day(from + i * DAY_MS));
    const perOperation = new Map<string, { count: number; credits: number }>();
    for (const r of rows) {
      const sum = perOperation.get(r.operation) ?? { count: 0, credits: 0 };
      perOperation.set(r.operation, { count: sum.count + r.count, credits: sum.credits + r.credits });
    }
    const operations = [...perOperation.entries()].sort(
      (a, b) => b[1].credits - a[1].credits || a[0].localeCompare(b[0]),
    );
    const colours = operationColours(operations.map(([op]) => op));
    const total = operations.reduce((sum, [, s]) => sum + s.credits, 0);
    return renderConsole(
      c,
      { title: "Usage", tab: "usage" },
      <>
        <h1>Usage</h1>
        <p class="muted">
          Credits billed per UTC day and operation, {dates[0]} to {dates.at(-1)}: synchronous operations on
          the day they ran, tasks on the day they were created unless refunded. The same numbers as{" "}
          <code>
            GET /v1/usage?from={dates[0]}&amp;to={dates.at(-1)}
          </code>
          .
        </p>
        <nav class="pills" aria-label="Range">
          {RANGES.map((r) => (
            <a href={`${consolePaths.usage}?days=${r}`} aria-current={r === days ? "true" : undefined}>
              {r} days
            </a>
          ))}
        </nav>
        <section class="panel">
          <h2>
            {formatNumber(total)} credit{total === 1 ? "" : "s"} in {days} days
          </h2>
          {rows.length === 0 ? (
            <p class="muted">No billed operations in these {days} days.</p>
          ) : (
            // Scrolls sideways on a phone: focusable, so the keyboard can scroll it too.
            <section class="chart-wrap" tabindex={0} aria-label="Chart of credits per day">
              <DailyUsageChart days={dates} rows={rows} colours={colours} />
            </section>
          )}
        </section>
        <div class="grid">
          <section class="panel">
            <h2>Per operation</h2>
            <Table
              columns={[
                { label: "Operation" },
                { label: "Count", num: true },
                { label: "Credits", num: true },
              ]}
              rows={operations.map(([op, s]) => ({
                id: op,
                cells: [
                  <span class="nowrap">
                    <Swatch colour={colours.get(op)} /> {op}
                  </span>,
                  formatNumber(s.count),
                  formatNumber(s.credits),
                ],
              }))}
              empty="Nothing billed."
            />
          </section>
          <section class="panel">
            <h2>Per day</h2>
            <Table
              columns={[
                { label: "Day" },
                { label: "Operation" },
                { label: "Count", num: true },
                { label: "Credits", num: true },
              ]}
              rows={[...rows].reverse().map((r) => ({
                id: `${r.date} ${r.operation}`,
                cells: [r.date, r.operation, formatNumber(r.count), formatNumber(r.credits)],
              }))}
              empty="Nothing billed."
            />
          </section>
        </div>
      </>,
    );
  });
}
