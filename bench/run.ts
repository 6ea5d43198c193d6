/**
 * npm run bench: starts the service as `npm run dev` does (own ports, fresh state) and prints one line per
 * benchmark, each a ratio against a baseline measured in the same run.
 */
import { authOverhead } from "./auth-overhead.ts";
import { startService } from "./lib/service.ts";

const service = await startService();
try {
  // A task to read: created through the public API once task creation exists; until then a missing id
  // exercises the same authentication, rate-limit and lookup path (answering 404).
  const created = await fetch(`${service.base}/v1/tasks`, {
    method: "POST",
    headers: { Authorization: `Bearer ${service.apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      type: "image.watermark",
      source_url: "http://127.0.0.1:9/none.png",
      params: { text: "x" },
    }),
  });
  const taskId = created.status === 201 ? ((await created.json()) as { id: string }).id : "";
  await authOverhead(service, taskId || undefined);
} finally {
  service.stop();
}
