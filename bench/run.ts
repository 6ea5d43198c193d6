/**
 * npm run bench: starts the service as `npm run dev` does (own ports, fresh state) and prints one line per
 * benchmark, each against a baseline measured in the same run (a bare route, sharp, ffprobe, the task's own
 * completion time). `npm run bench -- --pipeline-only` runs only the pipeline line (bench/pipeline.ts).
 * `npm run bench:engine` measures the media engine against raw ffmpeg.
 */
import { authOverhead } from "./auth-overhead.ts";
import { trickleServer } from "./lib/media.ts";
import { startService, unlimitedKey } from "./lib/service.ts";
import { operationBenchmarks } from "./operations.ts";
import { pipelineBenchmark } from "./pipeline.ts";
import { signinHash } from "./signin-hash.ts";
import { taskBenchmarks } from "./tasks.ts";
import { textWatermark } from "./text-watermark.ts";
import { uploadThroughput } from "./upload-throughput.ts";

// BENCH_PORT moves the service (port, engine port + 1, inspector + 2) beside another one on the machine.
const benchPort = process.env.BENCH_PORT === undefined ? undefined : Number(process.env.BENCH_PORT);
// BENCH_READY_TIMEOUT_MS: how long `npm run dev` may take to come up (5 min by default; more on a loaded machine).
const readyTimeoutMs = Number(process.env.BENCH_READY_TIMEOUT_MS ?? 300_000);
const service = await startService({
  readyTimeoutMs,
  ...(benchPort === undefined
    ? {}
    : { port: benchPort, enginePort: benchPort + 1, inspectorPort: benchPort + 2 }),
});
const trickle = await trickleServer();
try {
  if (process.argv.includes("--pipeline-only")) await pipelineBenchmark(service);
  else await benchmarks();
} finally {
  trickle.close();
  await service.stop();
}

async function benchmarks() {
  const createTask = async (sourceUrl: string) => {
    const created = await fetch(`${service.base}/v1/tasks`, {
      method: "POST",
      headers: { Authorization: `Bearer ${service.apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ type: "video.probe", source_url: sourceUrl }),
    });
    if (created.status !== 201) throw new Error(`creating a task to read failed: ${created.status}`);
    return ((await created.json()) as { id: string }).id;
  };
  // One task that ends at once (nothing listens on port 9), one that stays processing (its source trickles).
  const ended = await createTask("http://127.0.0.1:9/none.mp4");
  const running = await createTask(trickle.url);
  await authOverhead(service, { ended, running });
  await signinHash(service);
  const still = await fetch(`${service.base}/v1/tasks/${running}`, {
    headers: { Authorization: `Bearer ${service.apiKey}` },
  });
  const { status } = (await still.json()) as { status: string };
  if (status !== "processing")
    console.log(`(the running task was ${status} by the end; its line is not valid)`);
  if (!process.argv.includes("--auth-only")) {
    await operationBenchmarks(service);
    await taskBenchmarks(service);
    await pipelineBenchmark(service);
    await textWatermark();
    await uploadThroughput(service, await unlimitedKey(service));
  }
}
