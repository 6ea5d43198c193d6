import { formatNumber } from "../../ui/format";
import type { UsageRow } from "../../usage/query";

/** Distinct on light and dark panels (each ≥ 3:1 against both backgrounds), in a fixed order per operation. */
const COLOURS = ["#2454d6", "#c2410c", "#15803d", "#9333ea", "#b45309", "#0e7490", "#be185d", "#4d7c0f"];

const WIDTH = 760;
const HEIGHT = 260;
const LEFT = 56;
/** The credits axis is labelled on both sides: on a phone the chart scrolls, opened at its right end. */
const RIGHT = 56;
const BOTTOM = 28;
const TOP = 10;

/** Gridlines at a tidy step (1, 2 or 5 times a power of ten, whole credits), about four of them. */
function axis(max: number) {
  const rough = Math.max(1, max / 4);
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(1, ([1, 2, 5, 10].find((m) => m * power >= rough) ?? 10) * power);
  const top = Math.max(step, Math.ceil(max / step) * step);
  return { top, ticks: Array.from({ length: top / step + 1 }, (_, i) => i * step) };
}

export function operationColours(operations: string[]) {
  return new Map(operations.map((op, i) => [op, COLOURS[i % COLOURS.length]!]));
}

/**
 * Credits per UTC day as stacked bars, one colour per operation: an inline SVG drawn on the server (no script,
 * nothing fetched). Narrower than 600 px it scrolls inside its panel, opened at the newest days (the right), so
 * the credits axis is labelled at the right as well as the left: a phone shows the values without scrolling. Each bar segment has a <title> (day, operation, count, credits) for hover; the page's table
 * holds the same numbers for screen readers and small screens.
 */
export function DailyUsageChart(props: { days: string[]; rows: UsageRow[]; colours: Map<string, string> }) {
  const byDay = new Map<string, UsageRow[]>();
  for (const row of props.rows) byDay.set(row.date, [...(byDay.get(row.date) ?? []), row]);
  const totals = props.days.map((d) => (byDay.get(d) ?? []).reduce((sum, r) => sum + r.credits, 0));
  const { top, ticks } = axis(Math.max(0, ...totals));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const step = plotWidth / Math.max(1, props.days.length);
  const barWidth = Math.max(2, step * 0.72);
  const y = (credits: number) => TOP + plotHeight - (credits / top) * plotHeight;
  const labelEvery = Math.ceil(props.days.length / 8);
  const total = totals.reduce((a, b) => a + b, 0);
  return (
    <svg
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      width="100%"
      role="img"
      aria-label={`Credits per day from ${props.days[0]} to ${props.days.at(-1)}: ${formatNumber(total)} in all, at most ${formatNumber(Math.max(0, ...totals))} in a day.`}
      class="usage-chart daily"
    >
      {ticks.map((tick) => (
        <g>
          <line
            x1={LEFT}
            x2={WIDTH - RIGHT}
            y1={y(tick)}
            y2={y(tick)}
            stroke="currentColor"
            stroke-opacity="0.15"
          />
          <text x={LEFT - 6} y={y(tick) + 4} text-anchor="end" font-size="14" fill="currentColor">
            {formatNumber(tick)}
          </text>
          <text x={WIDTH - RIGHT + 6} y={y(tick) + 4} text-anchor="start" font-size="14" fill="currentColor">
            {formatNumber(tick)}
          </text>
        </g>
      ))}
      {props.days.map((d, i) => {
        const x = LEFT + i * step + (step - barWidth) / 2;
        let base = 0;
        return (
          <g>
            {(byDay.get(d) ?? []).map((r) => {
              const from = base;
              base += r.credits;
              return (
                <rect
                  x={x.toFixed(1)}
                  y={y(base).toFixed(1)}
                  width={barWidth.toFixed(1)}
                  height={Math.max(0, y(from) - y(base)).toFixed(1)}
                  fill={props.colours.get(r.operation)}
                >
                  <title>{`${d} ${r.operation}: ${r.count}×, ${formatNumber(r.credits)} credits`}</title>
                </rect>
              );
            })}
            {i % labelEvery === 0 ? (
              <text
                x={(x + barWidth / 2).toFixed(1)}
                y={HEIGHT - 8}
                text-anchor="middle"
                font-size="14"
                fill="currentColor"
              >
                {d.slice(5)}
              </text>
            ) : null}
          </g>
        );
      })}
    </svg>
  );
}
