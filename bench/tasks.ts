import http from "node:http";
import type { AddressInfo } from "node:net";
import { benchMedia, p50, serveMedia } from "./lib/media.ts";
import { type Service, unlimitedKey } from "./lib/service.ts";
import { sized } from "./lib/smoke.ts";

const RUNS = sized(7, 1);

/**
 * webhook-first-attempt: task completion (completed_at in the delivered body) → the first delivery attempt
 * arriving at a loopback receiver, p50. Goal ≤ 1000 ms locally.
 * task-image-watermark: POST /v1/tasks → succeeded (polled) for a 1280×720 image, p50.
 */
export async function taskBenchmarks(service: Service) {
  benchMedia();
  const media = await serveMedia();
  const key = await unlimitedKey(service);
  const arrivals = new Map<string, number>();
  const receiver = http.createServer((req, res) => {
    const arrived = Date.now();
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      const task = JSON.parse(body) as { id: string; completed_at: string };
      if (!arrivals.has(task.id)) arrivals.set(task.id, arrived - Date.parse(task.completed_at));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  try {
    const durations: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      const response = await fetch(`${service.base}/v1/tasks`, {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          type: "image.watermark",
          source_url: media.url("photo-720.jpg"),
          params: { text: "bench" },
          webhook: hook,
        }),
      });
      if (response.status !== 201)
        throw new Error(`POST /v1/tasks: ${response.status} ${await response.text()}`);
      const { id } = (await response.json()) as { id: string };
      ids.push(id);
      for (;;) {
        const task = (await (
          await fetch(`${service.base}/v1/tasks/${id}`, { headers: { Authorization: `Bearer ${key}` } })
        ).json()) as {
          status: string;
        };
        if (task.status === "succeeded") break;
        if (task.status === "failed" || task.status === "canceled")
          throw new Error(`bench task ${id} ${task.status}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      durations.push(performance.now() - started);
    }
    const deadline = Date.now() + 15_000;
    while (ids.some((id) => !arrivals.has(id)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const delays = ids.map((id) => arrivals.get(id)).filter((d): d is number => d !== undefined);
    console.log(
      `webhook-first-attempt: ${p50(delays).toFixed(0)} ms p50 (${delays.length}/${ids.length} delivered)`,
    );
    console.log(`task-image-watermark: ${p50(durations).toFixed(0)} ms p50 (1280x720, create → succeeded)`);
  } finally {
    receiver.close();
    media.close();
  }
}
