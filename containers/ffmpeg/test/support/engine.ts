/** Helpers shared by the engine tests: an in-process engine, protocol calls, and media checks. */

import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { inject } from "vitest";
import { type EngineConfig, resolveBinaries } from "../../src/config.ts";
import { traceCommands } from "../../src/pipeline/ffmpeg.ts";
import { createEngineServer, type EngineOptions, type EngineServer } from "../../src/server.ts";
import { withTextMark } from "./text-mark.ts";

const exec = promisify(execFile);

export const SECRET = "engine-test-secret";
export const AUTH = { authorization: `Bearer ${SECRET}` };

export const fixtureUrl = (pathname: string): string =>
  `http://127.0.0.1:${inject("fixturePort")}${pathname}`;
export const media = (name: string): string => fixtureUrl(`/media/${name}`);
export const fixturePath = (name: string): string => path.join(inject("fixtureDir"), name);

export interface TestEngine {
  url: string;
  engine: EngineServer;
  config: EngineConfig;
  /** POST /v1/jobs/<type> */
  job(type: string, body: Record<string, unknown>, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

let counter = 0;
export const jobId = (): string => `job-${process.pid}-${Date.now()}-${++counter}`;

export async function startTestEngine(
  overrides: Partial<EngineConfig> = {},
  options: EngineOptions = {},
): Promise<TestEngine> {
  const tmpDir = await mkdtemp(path.join(os.tmpdir(), "p6-engine-test-"));
  const config: EngineConfig = {
    secret: SECRET,
    host: "127.0.0.1",
    port: 0,
    allowPrivateSources: true,
    binaries: resolveBinaries(process.env),
    slots: 2,
    queue: 4,
    tmpDir,
    connectTimeoutMs: 2000,
    readTimeoutMs: 3000,
    // Off unless a test sets it: throttled fixtures here run far below the production floor on purpose.
    minSourceBytesPerSecond: 0,
    sourceRateWindowMs: 10_000,
    x264Preset: "veryfast",
    downloadAheadBytes: 32 * 1024 * 1024,
    warmProbes: 3,
    warmCommands: 0,
    ...overrides,
  };
  const engine = await createEngineServer(config, { log: () => {}, ...options });
  const url = await engine.listen();
  return {
    url,
    engine,
    config,
    job: (type, body, init = {}) =>
      fetch(`${url}/v1/jobs/${type}`, {
        method: "POST",
        headers: { ...AUTH, "content-type": "application/json" },
        body: JSON.stringify(withTextMark({ job_id: jobId(), ...body })),
        ...init,
      }),
    close: async () => {
      await engine.close();
      await rm(tmpDir, { recursive: true, force: true });
    },
  };
}

/** Files left under a directory (recursively). */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => !e.isDirectory()).map((e) => path.join(e.parentPath, e.name));
}

let outputDir: string | undefined;

/** Removes what saveBody wrote (test/support/setup.ts runs it after each test file). */
export async function removeSavedBodies(): Promise<void> {
  if (outputDir !== undefined) await rm(outputDir, { recursive: true, force: true });
  outputDir = undefined;
}

/** Writes a response body to a temp file and returns its path. */
export async function saveBody(res: Response, name: string): Promise<string> {
  outputDir ??= await mkdtemp(path.join(os.tmpdir(), "p6-engine-out-"));
  const file = path.join(await mkdtemp(path.join(outputDir, "r-")), name);
  await writeFile(file, Buffer.from(await res.arrayBuffer()));
  return file;
}

export interface Probed {
  format: { duration?: string; format_name?: string; bit_rate?: string };
  streams: {
    codec_type: string;
    codec_name: string;
    width?: number;
    height?: number;
    duration?: string;
    sample_rate?: string;
    channels?: number;
    bit_rate?: string;
    nb_frames?: string;
    avg_frame_rate?: string;
    nb_read_frames?: string;
  }[];
}

export async function ffprobe(file: string, extra: string[] = []): Promise<Probed> {
  const { ffprobe: bin } = resolveBinaries(process.env);
  const { stdout } = await exec(bin, [
    "-v",
    "error",
    "-of",
    "json",
    "-show_format",
    "-show_streams",
    ...extra,
    file,
  ]);
  return JSON.parse(stdout) as Probed;
}

/** Decodes the frame at `time` to raw RGB24 at the video's size. */
export async function frameRgb(file: string, time: number, width: number, height: number): Promise<Buffer> {
  const { ffmpeg } = resolveBinaries(process.env);
  const { stdout } = await exec(
    ffmpeg,
    [
      "-v",
      "error",
      "-ss",
      String(time),
      "-i",
      file,
      "-frames:v",
      "1",
      "-f",
      "rawvideo",
      "-pix_fmt",
      "rgb24",
      "-s",
      `${width}x${height}`,
      "pipe:1",
    ],
    { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

/** Mean absolute difference per channel between two RGB24 frames inside a rectangle. */
export function regionDiff(
  a: Buffer,
  b: Buffer,
  width: number,
  rect: { x: number; y: number; w: number; h: number },
): number {
  let sum = 0;
  let n = 0;
  for (let y = rect.y; y < rect.y + rect.h; y++) {
    for (let x = rect.x; x < rect.x + rect.w; x++) {
      const i = (y * width + x) * 3;
      for (let c = 0; c < 3; c++) sum += Math.abs(a[i + c]! - b[i + c]!);
      n += 3;
    }
  }
  return n === 0 ? 0 : sum / n;
}

/** Mean of one channel (0 red, 1 green, 2 blue) inside a rectangle. */
export function regionMean(
  frame: Buffer,
  width: number,
  rect: { x: number; y: number; w: number; h: number },
  channel: number,
): number {
  let sum = 0;
  let n = 0;
  for (let y = rect.y; y < rect.y + rect.h; y++) {
    for (let x = rect.x; x < rect.x + rect.w; x++) {
      sum += frame[(y * width + x) * 3 + channel]!;
      n++;
    }
  }
  return sum / n;
}

export async function errorOf(
  res: Response,
): Promise<{ status: number; code: string; message: string; field?: string }> {
  const body = (await res.json()) as { code: string; message: string; field?: string };
  return { status: res.status, ...body };
}

/** Public messages never leak paths, process output or internal addresses. */
export function assertSafeMessage(message: string): void {
  for (const bad of ["/tmp", "ffmpeg", "ffprobe", "127.0.0.1", "stderr", "Error:", "\n"]) {
    if (message.includes(bad)) throw new Error(`unsafe message: ${message}`);
  }
}

/**
 * An AbortController aborted the moment the first `bin` command is traced (a warm process is traced when a
 * job takes it), and that command line. Call `stop()` when done.
 */
export function abortOnFirstCommand(bin: string): {
  controller: AbortController;
  command: () => readonly string[] | undefined;
  stop: () => void;
} {
  const controller = new AbortController();
  let command: readonly string[] | undefined;
  traceCommands((traced, args) => {
    if (traced !== bin || command !== undefined) return;
    command = args;
    controller.abort();
  });
  return { controller, command: () => command, stop: () => traceCommands(null) };
}

/** Polls `ok` every 20 ms until it holds; fails naming `what` after `ms`. */
export async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** True while a process with this pid exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Running ffmpeg/ffprobe children of this process, but for `except` (an engine's waiting warm processes). */
export async function ffmpegChildren(except: readonly number[] = []): Promise<number[]> {
  const { readFile } = await import("node:fs/promises");
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // pid (comm) state ppid: a zombie (Z) or dead (X) process has exited and only waits to be reaped.
    const m = /^\d+ \((.*)\) (\S+) (\d+)/.exec(stat);
    const pid = Number(entry);
    if (
      m !== null &&
      !/^[ZX]$/.test(m[2] ?? "") &&
      Number(m[3]) === process.pid &&
      /^ff(mpeg|probe)$/.test(m[1] ?? "") &&
      !except.includes(pid)
    ) {
      pids.push(pid);
    }
  }
  return pids;
}
