import { formatNumber } from "../../ui/format";
import type { Usage } from "../usage";

const BAR = 22;
const GAP = 8;
const LABEL = 130;
const WIDTH = 480;

/** This month's credits per operation as horizontal bars: an inline SVG, no script, readable on a phone. */
export function UsageChart(props: { usage: Usage[] }) {
  if (props.usage.length === 0) return <p class="muted">No operations used this month.</p>;
  const max = Math.max(1, ...props.usage.map((u) => u.credits));
  const height = props.usage.length * (BAR + GAP);
  const room = WIDTH - LABEL - 70;
  return (
    <svg
      viewBox={`0 0 ${WIDTH} ${height}`}
      width="100%"
      role="img"
      aria-label={`Credits used this month per operation: ${props.usage.map((u) => `${u.operation} ${u.credits}`).join(", ")}`}
      class="usage-chart"
    >
      {props.usage.map((u, i) => {
        const y = i * (BAR + GAP);
        const width = Math.max(2, Math.round((u.credits / max) * room));
        return (
          <g>
            <text x={LABEL - 6} y={y + BAR * 0.7} text-anchor="end" font-size="13" fill="currentColor">
              {u.operation}
            </text>
            <rect x={LABEL} y={y} width={width} height={BAR} rx="3" fill="#2454d6" />
            <text x={LABEL + width + 6} y={y + BAR * 0.7} font-size="13" fill="currentColor">
              {`${formatNumber(u.credits)} (${u.count}×)`}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
