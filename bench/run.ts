/**
 * npm run bench: starts the service as `npm run dev` does (own ports, fresh state) and prints one line per
 * benchmark, each against a baseline measured in the same run (a bare route, sharp, ffprobe, the task's own
 * completion time). `npm run bench:engine` measures the media engine against raw ffmpeg.
 *
 * `npm run bench -- auth image` runs only the named groups (all by default):
 *   auth    auth-overhead, auth-overhead-running-task
 *   signin  signin-hash
 *   image   image-watermark-vs-sharp (with its split)
 *   probe   probe-overhead
 *   tasks   webhook-first-attempt, task-image-watermark
 *   text    text-watermark
 *   upload  upload-throughput
 *   pipeline  pipeline-vs-chained (bench/pipeline.ts)
 * BENCH_PORT picks the ports (bench/lib/smoke.ts); BENCH_SMOKE=1 runs each line once on tiny inputs;
 * BENCH_READY_TIMEOUT_MS: how long `npm run dev` may take to come up (5 min by default).
 */
import { authOverhead, runningTask } from "./auth-overhead.ts";
import { startService, unlimitedKey } from "./lib/service.ts";
import { BENCH_PORT, SMOKE, STATE_TEMPLATE } from "./lib/smoke.ts";
import { imageWatermarkVsSharp, probeOverhead } from "./operations.ts";
import { pipelineBenchmark } from "./pipeline.ts";
import { signinHash } from "./signin-hash.ts";
import { taskBenchmarks } from "./tasks.ts";
import { textWatermark } from "./text-watermark.ts";
import { uploadThroughput } from "./upload-throughput.ts";

const GROUPS = ["auth", "signin", "image", "probe", "tasks", "text", "upload", "pipeline"] as const;
type Group = (typeof GROUPS)[number];

const asked = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const unknown = asked.filter((a) => !GROUPS.includes(a as Group));
if (unknown.length > 0)
  throw new Error(`unknown bench group(s) ${unknown.join(", ")}; known: ${GROUPS.join(", ")}`);
const runs = (group: Group) => asked.length === 0 || asked.includes(group);

const service = await startService({
  port: BENCH_PORT,
  enginePort: BENCH_PORT + 1,
  inspectorPort: BENCH_PORT + 4,
  stateTemplate: STATE_TEMPLATE,
  readyTimeoutMs: Number(process.env.BENCH_READY_TIMEOUT_MS ?? 300_000),
});
try {
  if (runs("auth")) {
    const task = await runningTask(service);
    try {
      await authOverhead(service, task);
    } finally {
      await task.stop();
    }
  }
  if (runs("signin")) await signinHash(service);
  if (runs("image")) await imageWatermarkVsSharp(service);
  if (runs("probe")) await probeOverhead(service);
  if (runs("tasks")) await taskBenchmarks(service);
  if (runs("text")) await textWatermark(BENCH_PORT + 2);
  if (runs("upload")) await uploadThroughput(service, await unlimitedKey(service), BENCH_PORT + 3);
  if (runs("pipeline")) await pipelineBenchmark(service);
  if (SMOKE) console.log("bench smoke: done");
} finally {
  await service.stop();
}
