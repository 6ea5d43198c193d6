import { execFile } from "node:child_process";
import { existsSync, renameSync } from "node:fs";
import { promisify } from "node:util";
import { benchMedia, serveMedia } from "./lib/media.ts";
import { type Service, unlimitedKey } from "./lib/service.ts";
import { sized } from "./lib/smoke.ts";

/**
 * The bench's 60 s 1080p H.264/AAC source (bench/engine.ts makes the same file, same recipe); under
 * BENCH_SMOKE an 8 s 360p one, which a fresh clone's `npm test` makes in a second.
 */
const [SOURCE, SIZE, SECONDS, CLIP] = sized<[string, string, number, { start: number; duration: number }]>(
  ["bench-1080p-60s.mp4", "1920x1080", 60, { start: 10, duration: 10 }],
  ["bench-smoke-360p-8s.mp4", "640x360", 8, { start: 2, duration: 4 }],
);

/** The issue's example pipeline (issue 38), on `source`. */
const steps = (logo: string) => [
  { name: "clip", type: "video.trim", params: CLIP },
  { name: "marked", type: "video.watermark", use: "clip", params: { watermark_url: logo } },
  { name: "poster", type: "video.extract-cover", use: "marked", params: { time: 1 } },
  { name: "audio", type: "video.extract-audio", use: "clip", params: { format: "mp3" } },
  { name: "info", type: "video.probe", use: "marked" },
];

type Task = {
  id: string;
  status: string;
  outputs: { url: string; step?: string }[];
  error: unknown;
  metrics: { queue_time?: number; processing_time?: number };
};

/** A task's processing time (its Durable Object's run, engine included), in seconds as a label. */
const processing = (task: Task) => `${(task.metrics.processing_time ?? 0).toFixed(1)} s`;

/**
 * pipeline-vs-chained: the issue's example as one pipeline task against the same five operations as separate
 * tasks chained through their output URLs (each created once the one it reads has succeeded, as a client
 * does), on the 60 s 1080p source, one after the other in one run; wall time from the first POST to the last
 * task's end. Goal ≤ 0.7×. `npm run bench -- pipeline` runs this line alone.
 */
export async function pipelineBenchmark(service: Service) {
  const file = benchMedia();
  if (!existsSync(file(SOURCE))) {
    console.log(`generating bench/.media/${SOURCE} (once) …`);
    // Asynchronously: a blocked event loop misses the service closing its idle keep-alive sockets, and the
    // next request went out on a closed one ("other side closed").
    await promisify(execFile)(process.env.FFMPEG_PATH ?? "ffmpeg", [
      ...["-hide_banner", "-loglevel", "error", "-y"],
      ...["-f", "lavfi", "-i", `testsrc2=size=${SIZE}:rate=30:duration=${SECONDS}`],
      ...["-f", "lavfi", "-i", `sine=frequency=440:sample_rate=48000:duration=${SECONDS}`],
      ...["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k"],
      ...["-shortest", "-movflags", "+faststart", `${file(SOURCE)}.tmp.mp4`],
    ]);
    renameSync(`${file(SOURCE)}.tmp.mp4`, file(SOURCE));
  }
  const media = await serveMedia();
  const key = await unlimitedKey(service);
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
  /** Creates a task and waits for its end (Prefer: wait, asked again until it has ended). */
  const run = async (body: object): Promise<Task> => {
    const created = await fetch(`${service.base}/v1/tasks`, {
      method: "POST",
      headers: { ...headers, Prefer: "wait=60" },
      body: JSON.stringify(body),
    });
    if (created.status !== 201) throw new Error(`POST /v1/tasks: ${created.status} ${await created.text()}`);
    let task = (await created.json()) as Task;
    while (task.status === "queued" || task.status === "processing") {
      const read = await fetch(`${service.base}/v1/tasks/${task.id}`, {
        headers: { Authorization: `Bearer ${key}`, Prefer: "wait=60" },
      });
      task = (await read.json()) as Task;
    }
    if (task.status !== "succeeded")
      throw new Error(`bench task ${task.id} ${task.status}: ${JSON.stringify(task.error)}`);
    return task;
  };
  try {
    const source = media.url(SOURCE);
    const logo = media.url("logo.png");
    let started = performance.now();
    const pipelineTask = await run({ type: "pipeline", source_url: source, params: { steps: steps(logo) } });
    const pipeline = performance.now() - started;

    started = performance.now();
    const [clip, marked, poster, audio, info] = steps(logo);
    const urlOf = (task: Task) => task.outputs[0]!.url;
    const clipTask = await run({ type: clip!.type, source_url: source, params: clip!.params });
    const markedTask = await run({ type: marked!.type, source_url: urlOf(clipTask), params: marked!.params });
    const posterTask = await run({
      type: poster!.type,
      source_url: urlOf(markedTask),
      params: poster!.params,
    });
    const audioTask = await run({ type: audio!.type, source_url: urlOf(clipTask), params: audio!.params });
    const infoTask = await run({ type: info!.type, source_url: urlOf(markedTask) });
    const chained = performance.now() - started;
    console.log(
      `pipeline-vs-chained: ${(pipeline / chained).toFixed(2)}x (${Math.round(pipeline)} ms vs ${Math.round(chained)} ms; the example on ${SECONDS} s ${SIZE}, goal ≤ 0.7x)`,
    );
    // Where the time goes: each chained task's processing (fetch, engine, store) against the pipeline's one run.
    const tasks = [clipTask, markedTask, posterTask, audioTask, infoTask];
    const names = ["clip", "marked", "poster", "audio", "info"];
    console.log(
      `  processing: pipeline ${processing(pipelineTask)}; chained ${tasks.map((t, i) => `${names[i]} ${processing(t)}`).join(", ")}`,
    );
  } finally {
    media.close();
  }
}
