/**
 * `npm run bench:engine-cpu`: the CPU one job costs the media engine, per job type of bench:load's mix, split
 * into the engine's own Node process and the ffmpeg/ffprobe processes it ran (its reaped children). CPU, not
 * latency, is what a saturated machine queues on (docs/performance.md, "What one job costs the engine").
 *
 * Two engines run the same jobs one after the other, on the same source (bench/.media/clip.mp4, 9.4 MB,
 * faststart, served from loopback): one on the engine image's ffmpeg build (.tools/ffmpeg, `npm run
 * build:ffmpeg`; containers/ffmpeg/build-ffmpeg.sh), and a baseline on Debian's ffmpeg from PATH, whose every
 * start loads 215 shared libraries. The ratios compare the two, measured in this run; without the build, the
 * baseline alone runs. Jobs run one at a time; BENCH_JOBS sets how many per type (20).
 */
import { readFileSync } from "node:fs";
import { startEngine } from "../containers/ffmpeg/src/launch.ts";
import { chooseEngineFfmpeg, describeFfmpeg, engineFfmpegEnv } from "../scripts/lib/engine-ffmpeg.ts";
import { benchMedia, serveMedia } from "./lib/media.ts";
import { sized } from "./lib/smoke.ts";

const JOBS = Number(process.env.BENCH_JOBS ?? sized(20, 1));
const SECRET = "bench-engine-cpu-secret-0123456789";
const TYPES: [string, Record<string, unknown>][] = [
  ["video.probe", {}],
  ["video.extract-cover", { time: 1 }],
  ["video.trim", { start: 1, end: 3 }],
];

/** CPU ms of process `pid` so far: its own, and its reaped children's. */
function cpu(pid: number) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  const ms = (i: number) => (Number(fields[i]) * 1000) / 100; // clock ticks (USER_HZ 100) → ms
  return { node: ms(11) + ms(12), children: ms(13) + ms(14) };
}

type Cost = { node: number; children: number; wall: number };

async function measure(label: string, env: Record<string, string>, url: string) {
  // Started with time to spare: on a loaded machine the engine took 20-40 s to listen.
  const engine = await startEngine(
    { ENGINE_SECRET: SECRET, ALLOW_PRIVATE_SOURCES: "true", ...env },
    { timeoutMs: 120_000 },
  );
  const pid = engine.child.pid!;
  let n = 0;
  const job = async (type: string, params: Record<string, unknown>) => {
    const res = await fetch(`${engine.url}/v1/jobs/${type}`, {
      method: "POST",
      headers: { authorization: `Bearer ${SECRET}` },
      body: JSON.stringify({
        job_id: `cpu-${++n}`,
        source_url: url,
        params,
        max_source_bytes: 1024 ** 3,
        timeout_ms: 120_000,
      }),
    });
    if (res.status !== 200) throw new Error(`${label} ${type}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  // After a job's response the engine still starts its warm processes and reaps the job's: let them settle.
  const settle = () => new Promise((r) => setTimeout(r, sized(1500, 100)));
  const costs = new Map<string, Cost>();
  try {
    for (const [type, params] of TYPES) {
      for (let i = 0; i < sized(3, 1); i++) await job(type, params); // warm pools and caches, as under load
      await settle();
      const before = cpu(pid);
      const started = performance.now();
      for (let i = 0; i < JOBS; i++) await job(type, params);
      const wall = (performance.now() - started) / JOBS;
      await settle();
      const after = cpu(pid);
      const cost = {
        node: (after.node - before.node) / JOBS,
        children: (after.children - before.children) / JOBS,
        wall,
      };
      costs.set(type, cost);
      console.log(
        `${label.padEnd(9)} ${type.padEnd(20)} engine Node ${cost.node.toFixed(0).padStart(4)} ms, ffmpeg/ffprobe ${cost.children.toFixed(0).padStart(5)} ms CPU per job; ${cost.wall.toFixed(0)} ms each, one at a time`,
      );
    }
  } finally {
    await engine.stop();
  }
  return costs;
}

benchMedia();
const media = await serveMedia();
try {
  const url = media.url("clip.mp4");
  // PATH's ffmpeg 5.x (Debian's), or Debian's installed; never another version (scripts/lib/engine-ffmpeg.ts).
  const chosen = chooseEngineFfmpeg({ env: { PATH: process.env.PATH } });
  console.log(`Baseline: ${describeFfmpeg(chosen)}`);
  const debian = { ffmpeg: chosen.FFMPEG_PATH, ffprobe: chosen.FFPROBE_PATH };
  const baseline = await measure("Debian", { FFMPEG_PATH: debian.ffmpeg, FFPROBE_PATH: debian.ffprobe }, url);
  const built = engineFfmpegEnv({});
  if (!built.FFMPEG_PATH) {
    console.log(
      "\nNo .tools/ffmpeg: `npm run build:ffmpeg` builds the engine image's ffmpeg to compare with.",
    );
  } else {
    const current = await measure("image's", built, url);
    console.log("\nCPU per job, the image's ffmpeg build / Debian's ffmpeg:");
    for (const [type] of TYPES) {
      const a = current.get(type)!;
      const b = baseline.get(type)!;
      console.log(
        `  ${type.padEnd(20)} ffmpeg/ffprobe ${(a.children / b.children).toFixed(2)}×, all processes ${((a.node + a.children) / (b.node + b.children)).toFixed(2)}× (${(a.node + a.children).toFixed(0)} vs ${(b.node + b.children).toFixed(0)} ms)`,
      );
    }
  }
} finally {
  media.close();
}
