import autocannon from "autocannon";
import type { Service } from "./lib/service.ts";
import { unlimitedKey } from "./lib/service.ts";

const ROUNDS = 3;

async function throughput(url: string, headers: Record<string, string>) {
  const result = await autocannon({ url, headers, connections: 16, duration: 4 });
  if (result.non2xx) throw new Error(`${url}: ${result.non2xx} non-2xx responses`);
  return result["2xx"] / result.duration;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * auth-overhead: authenticated GET /v1/tasks/{id} (the key's gate — a Durable Object that verifies the key and
 * applies the exact rate limit — then the task read) versus the unauthenticated GET /healthz of the same Worker.
 * Rounds alternate between the routes so machine drift hits all alike; the medians are compared. Goal: ≥ 0.5×.
 * The line is printed for an ended task (`auth-overhead`, which the isolate keeps once read: readTask in
 * src/tasks/query.ts) and for a task still running (`auth-overhead-running-task`, read from D1 every time).
 */
export async function authOverhead(service: Service, tasks: { ended: string; running: string }) {
  const key = await unlimitedKey(service);
  const auth = { Authorization: `Bearer ${key}` };
  const routes = [
    { label: "trivial", url: `${service.base}/healthz`, headers: {} },
    { label: "auth-overhead", url: `${service.base}/v1/tasks/${tasks.ended}`, headers: auth },
    { label: "auth-overhead-running-task", url: `${service.base}/v1/tasks/${tasks.running}`, headers: auth },
  ];
  for (const route of routes) await throughput(route.url, route.headers); // warm-up of every path
  const rates = routes.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, route] of routes.entries()) rates[i]!.push(await throughput(route.url, route.headers));
  }
  const t = median(rates[0]!);
  for (const [i, route] of routes.entries()) {
    if (i === 0) continue;
    const a = median(rates[i]!);
    console.log(`${route.label}: ${(a / t).toFixed(2)}x (${a.toFixed(0)} req/s vs ${t.toFixed(0)} req/s)`);
  }
}
