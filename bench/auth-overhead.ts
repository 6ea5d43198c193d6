import autocannon from "autocannon";
import { runningSource } from "./lib/media.ts";
import type { Service } from "./lib/service.ts";
import { unlimitedKey } from "./lib/service.ts";
import { sized } from "./lib/smoke.ts";

const ROUNDS = sized(3, 1);
const SECONDS = sized(4, 1);

async function throughput(url: string, headers: Record<string, string>) {
  const result = await autocannon({ url, headers, connections: 16, duration: SECONDS });
  if (result.non2xx) throw new Error(`${url}: ${result.non2xx} non-2xx responses`);
  return result["2xx"] / result.duration;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

type Tasks = { ended: string; running: string; status: () => Promise<string> };

/**
 * Two tasks to read: one that ended at once (nothing listens on port 9) and one that stays `processing` for as
 * long as the bench runs (its source streams a never-ending MP4 above the engine's slow-source floor,
 * runningSource). `stop` cancels the running one (it holds an engine slot) and closes its source.
 */
export async function runningTask(service: Service) {
  const source = await runningSource();
  const auth = { Authorization: `Bearer ${service.apiKey}` };
  const create = async (sourceUrl: string) => {
    const created = await fetch(`${service.base}/v1/tasks`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ type: "video.probe", source_url: sourceUrl }),
    });
    if (created.status !== 201) throw new Error(`creating a task to read failed: ${created.status}`);
    return ((await created.json()) as { id: string }).id;
  };
  const status = async (id: string) =>
    ((await (await fetch(`${service.base}/v1/tasks/${id}`, { headers: auth })).json()) as { status: string })
      .status;
  const ended = await create("http://127.0.0.1:9/none.mp4");
  const running = await create(source.url);
  // Both read as what they are before anything is measured: one ended, one processing.
  for (const [id, want] of [
    [ended, "failed"],
    [running, "processing"],
  ] as const) {
    const deadline = Date.now() + 30_000;
    while ((await status(id)) !== want) {
      if (Date.now() > deadline) throw new Error(`task ${id} is ${await status(id)}, not ${want}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    ended,
    running,
    status: () => status(running),
    stop: async () => {
      await fetch(`${service.base}/v1/tasks/${running}/cancel`, { method: "POST", headers: auth });
      source.close();
    },
  };
}

/**
 * auth-overhead: authenticated GET /v1/tasks/{id} (the key's gate — a Durable Object that verifies the key and
 * applies the exact rate limit — then the task read) versus the unauthenticated GET /healthz of the same Worker.
 * Rounds alternate between the routes so machine drift hits all alike; the medians are compared. Goal: ≥ 0.8×.
 * The line is printed for an ended task (`auth-overhead`, which the isolate keeps once read: readTask in
 * src/tasks/query.ts) and for a task still running (`auth-overhead-running-task`, read from D1 every time); the
 * running task's line is marked invalid unless the task is still processing at the end.
 */
export async function authOverhead(service: Service, tasks: Tasks) {
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
  const still = await tasks.status();
  const t = median(rates[0]!);
  for (const [i, route] of routes.entries()) {
    if (i === 0) continue;
    const a = median(rates[i]!);
    const invalid =
      route.label === "auth-overhead-running-task" && still !== "processing"
        ? ` invalid: the running task was ${still} by the end`
        : "";
    console.log(
      `${route.label}: ${(a / t).toFixed(2)}x (${a.toFixed(0)} req/s vs ${t.toFixed(0)} req/s)${invalid}`,
    );
  }
}
