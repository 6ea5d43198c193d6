/**
 * node scripts/node22.mjs bench/load-nice.ts — what ENGINE_TASK_NICE buys when task encodes saturate the cores
 * (issue 13): a synchronous probe (the engine's ffprobe of bench/.media/clip.mp4) and a slice of in-process
 * CPU work (a stand-in for the Worker's in-Worker image codecs on the same machine, as under `npm run dev`)
 * timed while `BENCH_ENCODES` (2, one per core) x264 encodes run at nice 0, at nice 10, and with no encode at
 * all. The three modes alternate round by round (`BENCH_ROUNDS`, 4), so they share the machine's conditions;
 * on a machine loaded by others, compare the modes with each other, not with another run.
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import os from "node:os";
import { promisify } from "node:util";
import { benchMedia } from "./lib/media.ts";
import { sized } from "./lib/smoke.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? sized(4, 1));
const ENCODES = Number(process.env.BENCH_ENCODES ?? sized(2, 1));
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? sized(6, 1));
const FFMPEG = process.env.FFMPEG_PATH ?? "ffmpeg";
const FFPROBE = process.env.FFPROBE_PATH ?? "ffprobe";
const run = promisify(execFile);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

/** An endless 720p x264 encode (a task's watermark or accurate trim), at `nice`. */
function encode(nice: number) {
  const child = spawn(
    FFMPEG,
    [
      ...[
        "-hide_banner",
        "-loglevel",
        "error",
        "-re",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=1280x720:rate=240",
      ],
      ...["-c:v", "libx264", "-preset", "veryfast", "-f", "null", "-"],
    ],
    { stdio: "ignore" },
  );
  if (nice > 0 && child.pid !== undefined) os.setPriority(child.pid, Math.min(19, os.getPriority() + nice));
  return child;
}

async function timed(fn: () => Promise<unknown> | unknown): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** About 50 ms of hashing on an idle core. */
const buffer = Buffer.alloc(sized(64, 1) * 1024 * 1024, 7);
const cpuSlice = () => createHash("sha256").update(buffer).digest();

async function main() {
  const clip = benchMedia()("clip.mp4");
  const modes = [
    { name: "no encode", nice: -1 },
    { name: "encodes at nice 0", nice: 0 },
    { name: "encodes at nice 10", nice: 10 },
  ];
  const results = new Map(modes.map((m) => [m.name, { probe: [] as number[], cpu: [] as number[] }]));
  console.log(
    `${ROUNDS} rounds × ${SAMPLES} samples per mode; ${ENCODES} encodes; load average before ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 === 0 ? modes : [...modes].reverse()) {
      const encodes = mode.nice < 0 ? [] : Array.from({ length: ENCODES }, () => encode(mode.nice));
      await new Promise((r) => setTimeout(r, sized(1500, 100)));
      const into = results.get(mode.name)!;
      for (let i = 0; i < SAMPLES; i++) {
        into.probe.push(
          await timed(() =>
            run(FFPROBE, ["-v", "error", "-of", "json", "-show_format", "-show_streams", clip]),
          ),
        );
        into.cpu.push(await timed(cpuSlice));
      }
      for (const child of encodes) child.kill("SIGKILL");
      await Promise.all(
        encodes.map((c) => new Promise((r) => (c.exitCode === null ? c.once("exit", r) : r(null)))),
      );
    }
  }
  const idle = results.get("no encode")!;
  for (const [name, r] of results) {
    const line = (label: string, values: number[], base: number[]) =>
      `${label} p50 ${percentile(values, 50).toFixed(0)} ms, p99 ${percentile(values, 99).toFixed(0)} ms ` +
      `(${(percentile(values, 50) / percentile(base, 50)).toFixed(2)}× / ${(percentile(values, 99) / percentile(base, 99)).toFixed(2)}× no encode)`;
    console.log(`${name}: ${line("probe", r.probe, idle.probe)}; ${line("cpu slice", r.cpu, idle.cpu)}`);
  }
  console.log(
    `load average after ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
}

await main();
