import autocannon from "autocannon";
import type { Service } from "./lib/service.ts";
import { unlimitedKey } from "./lib/service.ts";

async function throughput(url: string, headers: Record<string, string>, expectStatus: number) {
  const result = await autocannon({ url, headers, connections: 16, duration: 8, expectBody: undefined });
  const good = result["2xx"] + (expectStatus === 404 ? result["4xx"] : 0);
  if (result.non2xx && expectStatus === 200) throw new Error(`${url}: ${result.non2xx} non-2xx responses`);
  return (good / result.duration) as number;
}

/**
 * auth-overhead: authenticated GET /v1/tasks/{id} (key lookup in D1, hash compare, rate-limit Durable Object,
 * task read) versus the unauthenticated GET /healthz of the same Worker. Goal: ≥ 0.5×.
 */
export async function authOverhead(service: Service, taskId: string | undefined) {
  const key = await unlimitedKey(service);
  await throughput(`${service.base}/healthz`, {}, 200); // warm-up of both paths
  const trivial = await throughput(`${service.base}/healthz`, {}, 200);
  const authed = await throughput(
    `${service.base}/v1/tasks/${taskId ?? "01JD5Z8X4QK3M7R2T9V6W1Y0AB"}`,
    { Authorization: `Bearer ${key}` },
    taskId ? 200 : 404,
  );
  console.log(
    `auth-overhead: ${(authed / trivial).toFixed(2)}x (${authed.toFixed(0)} req/s vs ${trivial.toFixed(0)} req/s)`,
  );
}
