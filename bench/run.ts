/**
 * npm run bench: starts the service as `npm run dev` does (own ports, fresh state) and prints one line per
 * benchmark, each against a baseline measured in the same run (a bare route, sharp, ffprobe, the task's own
 * completion time). `npm run bench:engine` measures the media engine against raw ffmpeg.
 */
import { authOverhead } from "./auth-overhead.ts";
import { startService } from "./lib/service.ts";
import { operationBenchmarks } from "./operations.ts";
import { taskBenchmarks } from "./tasks.ts";

const service = await startService();
try {
  const created = await fetch(`${service.base}/v1/tasks`, {
    method: "POST",
    headers: { Authorization: `Bearer ${service.apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ type: "video.probe", source_url: "http://127.0.0.1:9/none.mp4" }),
  });
  if (created.status !== 201) throw new Error(`creating the task to read failed: ${created.status}`);
  await authOverhead(service, ((await created.json()) as { id: string }).id);
  if (!process.argv.includes("--auth-only")) {
    await operationBenchmarks(service);
    await taskBenchmarks(service);
  }
} finally {
  service.stop();
}
