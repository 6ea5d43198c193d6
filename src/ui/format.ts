/** Display formats: UTC timestamps to the second, grouped integers, short durations. */

/** "2026-11-22" and "14:03:05" (UTC). */
export function timeParts(ms: number) {
  const iso = new Date(ms).toISOString();
  return { date: iso.slice(0, 10), time: iso.slice(11, 19) };
}

export function formatNumber(n: number) {
  return n.toLocaleString("en-US");
}

export function formatSigned(n: number) {
  return n > 0 ? `+${formatNumber(n)}` : formatNumber(n);
}

/** "23 h 59 min", "4 min", "less than a minute". */
export function formatRemaining(ms: number) {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return "less than a minute";
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  if (hours === 0) return `${rest} min`;
  return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
}

/** "512 B", "1.5 KiB", "50 GiB": binary units, one decimal below 10. */
export function formatBytes(n: number) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = unit === 0 || value >= 10 || Number.isInteger(value) ? 0 : 1;
  return `${value.toFixed(digits)} ${units[unit]}`;
}
