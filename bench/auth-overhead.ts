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
 * applies the exact rate limit — then the task read from D1) versus the unauthenticated GET /healthz of the
 * same Worker. Rounds alternate between the two so machine drift hits both alike; the medians are compared.
 * Goal: ≥ 0.5×.
 */
export async function authOverhead(service: Service, taskId: string) {
  const key = await unlimitedKey(service);
  const trivialUrl = `${service.base}/healthz`;
  const authedUrl = `${service.base}/v1/tasks/${taskId}`;
  const auth = { Authorization: `Bearer ${key}` };
  await throughput(trivialUrl, {}); // warm-up of both paths
  await throughput(authedUrl, auth);
  const trivial: number[] = [];
  const authed: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    trivial.push(await throughput(trivialUrl, {}));
    authed.push(await throughput(authedUrl, auth));
  }
  const [a, t] = [median(authed), median(trivial)];
  console.log(`auth-overhead: ${(a / t).toFixed(2)}x (${a.toFixed(0)} req/s vs ${t.toFixed(0)} req/s)`);
}
