/** Engine configuration, read once from the environment at start. */
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { LIMITS } from "./security/limits.ts";

export interface Binaries {
  ffmpeg: string;
  ffprobe: string;
  /** Where each came from: FFMPEG_PATH/FFPROBE_PATH or PATH. */
  source: { ffmpeg: BinarySource; ffprobe: BinarySource };
}
export type BinarySource = "env" | "path";

export interface EngineConfig {
  secret: string;
  host: string;
  port: number;
  allowPrivateSources: boolean;
  binaries: Binaries;
  slots: number;
  queue: number;
  /**
   * Slots a low-priority job (a task) must leave free, kept for synchronous calls (pool.ts); fewer than
   * `slots`, so tasks always run on an idle engine. loadConfig sets it; engines built by hand (tests) have none.
   */
  reservedSlots?: number;
  /**
   * Low-priority jobs that may run even when only reserved slots are free (pool.ts): 1 guarantees tasks
   * progress while synchronous jobs hold the other slots, at the price of a synchronous call waiting for one.
   */
  taskMinSlots?: number;
  /** How long after a synchronous job's arrival the reserve still holds; afterwards tasks use every slot. */
  reserveHoldMs?: number;
  /**
   * Slots of the light lane (pool.ts), apart from `slots`: synchronous video.probe jobs run there without
   * waiting behind encodes. 0 turns the lane off. loadConfig sets it; engines built by hand have none.
   */
  lightSlots?: number;
  /**
   * How many nice steps below the engine a task's ffmpeg and ffprobe run (priority.ts), so synchronous calls
   * get the CPU first; 0 runs them at the engine's priority. loadConfig sets it; engines built by hand: 0.
   */
  taskNice?: number;
  tmpDir: string;
  connectTimeoutMs: number;
  readTimeoutMs: number;
  /**
   * The least a source must deliver once it answered, in bytes per second averaged over each
   * `sourceRateWindowMs` (windows where the engine itself held the download back do not count); 0: no floor.
   * A slower source ends the job SOURCE_UNREACHABLE, so a drip-fed source cannot hold a slot for long.
   */
  minSourceBytesPerSecond: number;
  sourceRateWindowMs: number;
  /** x264 preset of re-encoding operations (watermark, accurate trim). */
  x264Preset: string;
  /** How far a source download may run ahead of what ffmpeg has asked for. */
  downloadAheadBytes: number;
  /**
   * How far a download may run ahead before its readers have read more than this; the lead then grows with
   * what they read, up to downloadAheadBytes (source.ts). Default (and for engines built by hand)
   * LIMITS.downloadLeadBytes: a probe reads only a file's head.
   */
  downloadLeadBytes?: number;
  /** ffprobe processes kept started for input probes (pipeline/warm-probe.ts); 0 turns them off. */
  warmProbes: number;
  /** ffmpeg processes kept started for short commands that come again (pipeline/warm-ffmpeg.ts); 0: off. */
  warmCommands: number;
}

type Env = Record<string, string | undefined>;

function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` in env.PATH (also used by scripts/lib/engine-ffmpeg.ts). */
export function onPath(name: string, env: Env): string | null {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

/**
 * Path of a binary shipped by @ffmpeg-installer/ffmpeg or @ffprobe-installer/ffprobe, if installed; for the
 * tests that run the engine on them by FFMPEG_PATH, never chosen by resolveBinaries.
 */
export function npmBinary(name: "ffmpeg" | "ffprobe"): string | null {
  const require = createRequire(import.meta.url);
  try {
    const mod = require(name === "ffmpeg" ? "@ffmpeg-installer/ffmpeg" : "@ffprobe-installer/ffprobe") as {
      path?: string;
    };
    return mod.path !== undefined && existsSync(mod.path) ? mod.path : null;
  } catch {
    return null;
  }
}

/**
 * FFMPEG_PATH/FFPROBE_PATH, else PATH's. Never the npm-shipped builds on their own (issue 29): a machine
 * without ffmpeg on PATH ran the engine on @ffmpeg-installer's 2018 build without a word, and exact runs came
 * out wrong on it. They are used only when named in FFMPEG_PATH (binaries.test.ts does).
 */
function resolveBinary(name: "ffmpeg" | "ffprobe", env: Env): { path: string; source: BinarySource } {
  const fromEnv = env[name === "ffmpeg" ? "FFMPEG_PATH" : "FFPROBE_PATH"];
  if (fromEnv !== undefined && fromEnv !== "") return { path: fromEnv, source: "env" };
  const found = onPath(name, env);
  if (found !== null) return { path: found, source: "path" };
  throw new Error(
    `${name} not found: the engine runs on ffmpeg 5.x (apt-get install ffmpeg), on PATH or named by ${name.toUpperCase()}_PATH`,
  );
}

export function resolveBinaries(env: Env): Binaries {
  const ffmpeg = resolveBinary("ffmpeg", env);
  const ffprobe = resolveBinary("ffprobe", env);
  return {
    ffmpeg: ffmpeg.path,
    ffprobe: ffprobe.path,
    source: { ffmpeg: ffmpeg.source, ffprobe: ffprobe.source },
  };
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer between ${min} and ${max}`);
  }
  return value;
}

export function loadConfig(env: Env = process.env): EngineConfig {
  const secret = env.ENGINE_SECRET ?? "";
  if (secret === "") throw new Error("ENGINE_SECRET is required");
  const cpus = Math.max(1, os.availableParallelism());
  const slots = int(env, "ENGINE_SLOTS", cpus, 1, 256);
  return {
    secret,
    host: env.HOST || "0.0.0.0",
    port: int(env, "PORT", 8080, 0, 65535),
    allowPrivateSources: env.ALLOW_PRIVATE_SOURCES === "true",
    binaries: resolveBinaries(env),
    slots,
    queue: int(env, "ENGINE_QUEUE", 2 * slots, 0, 10_000),
    reservedSlots: int(env, "ENGINE_RESERVED_SLOTS", Math.floor(slots / 2), 0, slots - 1),
    taskMinSlots: int(env, "ENGINE_TASK_MIN_SLOTS", 0, 0, slots),
    reserveHoldMs: int(env, "ENGINE_RESERVE_HOLD_MS", 30_000, 0, 3_600_000),
    lightSlots: int(env, "ENGINE_LIGHT_SLOTS", slots, 0, 256),
    taskNice: int(env, "ENGINE_TASK_NICE", 10, 0, 19),
    tmpDir: env.ENGINE_TMPDIR || path.join(os.tmpdir(), "p6-engine"),
    connectTimeoutMs: int(env, "ENGINE_CONNECT_TIMEOUT_MS", 10_000, 100, 600_000),
    readTimeoutMs: int(env, "ENGINE_READ_TIMEOUT_MS", 30_000, 100, 3_600_000),
    minSourceBytesPerSecond: int(env, "ENGINE_MIN_SOURCE_BYTES_PER_SECOND", 64 * 1024, 0, 2 ** 30),
    sourceRateWindowMs: int(env, "ENGINE_SOURCE_RATE_WINDOW_MS", 10_000, 100, 600_000),
    x264Preset: env.ENGINE_X264_PRESET || "veryfast",
    downloadAheadBytes: int(
      env,
      "ENGINE_DOWNLOAD_AHEAD_BYTES",
      LIMITS.downloadAheadBytes,
      64 * 1024,
      2 ** 40,
    ),
    downloadLeadBytes: int(env, "ENGINE_DOWNLOAD_LEAD_BYTES", LIMITS.downloadLeadBytes, 64 * 1024, 2 ** 40),
    warmProbes: int(env, "ENGINE_WARM_PROBES", 3, 0, 32),
    warmCommands: int(env, "ENGINE_WARM_COMMANDS", 2, 0, 16),
  };
}
