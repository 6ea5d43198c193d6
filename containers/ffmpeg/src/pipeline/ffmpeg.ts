/**
 * Running ffmpeg and ffprobe: argument arrays only (never a shell), no stdin, errors only on stderr,
 * progress from `-progress pipe:1`, and a hard SIGKILL when the job is aborted or times out. A run's
 * promise settles only after the process has exited, so temp files are never removed under a live process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { lowerPriority } from "../priority.ts";
import { EngineError, unsupported } from "../protocol.ts";
import { LIMITS } from "../security/limits.ts";

/** Processes alive right now (the tests assert this drops to zero after an abort). */
export const liveProcesses = new Set<ChildProcess>();

let trace: ((bin: string, args: readonly string[]) => void) | null = null;

/** Reports every command line before it runs (ENGINE_TRACE_COMMANDS=true; the bench replays them). */
export function traceCommands(fn: ((bin: string, args: readonly string[]) => void) | null): void {
  trace = fn;
}

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface RunOptions {
  signal: AbortSignal;
  onStdoutLine?: (line: string) => void;
  /**
   * A warm process (warm-probe.ts, warm-ffmpeg.ts): started before any job wants it, so it is neither
   * traced nor counted among the live processes until a job takes it (`adopt`).
   */
  warm?: boolean;
}

interface Started {
  child: ChildProcess | null;
  exit: Promise<Exit>;
}

/** Counts a warm process as a job's from now on (live, traced with the arguments it runs). */
export function adopt(child: ChildProcess, bin: string, args: readonly string[]): void {
  trace?.(bin, args);
  if (child.exitCode === null && child.signalCode === null) {
    liveProcesses.add(child);
    lowerPriority(child.pid);
  }
}

function start(bin: string, args: readonly string[], opts: RunOptions): Started {
  const { signal, onStdoutLine } = opts;
  if (signal.aborted) return { child: null, exit: Promise.reject(signal.reason) };
  if (opts.warm !== true) trace?.(bin, args);
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"], windowsHide: true });
  if (opts.warm !== true) {
    liveProcesses.add(child);
    lowerPriority(child.pid);
  }
  const exit = new Promise<Exit>((resolve, reject) => {
    let stdout = "";
    let stdoutBytes = 0;
    let pending = "";
    let stderr = "";
    let overflow = false;
    const kill = () => child.kill("SIGKILL");
    signal.addEventListener("abort", kill, { once: true });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (onStdoutLine !== undefined) {
        pending += chunk;
        let i = pending.indexOf("\n");
        while (i >= 0) {
          onStdoutLine(pending.slice(0, i).trim());
          pending = pending.slice(i + 1);
          i = pending.indexOf("\n");
        }
        return;
      }
      stdoutBytes += Buffer.byteLength(chunk);
      if (stdoutBytes > LIMITS.maxProbeOutputBytes) {
        overflow = true;
        kill();
        return;
      }
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-LIMITS.stderrTailBytes);
    });
    child.on("error", (err) => {
      // spawn failure (binary missing); 'close' follows
      stderr += `\nspawn error: ${err.message}`;
    });
    child.on("close", (code) => {
      liveProcesses.delete(child);
      signal.removeEventListener("abort", kill);
      if (signal.aborted) reject(signal.reason);
      else if (overflow) reject(unsupported("the media has too much metadata to probe"));
      else resolve({ code, stdout, stderr });
    });
  });
  return { child, exit };
}

function run(
  bin: string,
  args: readonly string[],
  signal: AbortSignal,
  onStdoutLine?: (line: string) => void,
): Promise<Exit> {
  return start(bin, args, { signal, ...(onStdoutLine === undefined ? {} : { onStdoutLine }) }).exit;
}

const DECODE_FAILURES = [
  /Invalid data found when processing input/i,
  /moov atom not found/i,
  /could not find codec parameters/i,
  /Error while decoding/i,
  /error reading header/i,
  /Invalid NAL unit/i,
  /partial file/i,
  /does not contain any stream/i,
  /Failed to read frame size/i,
  /no frame!/i,
  /End of file/i,
  /Cannot determine format of input stream/i,
];

/**
 * A decoder met a frame beyond `-max_pixels` (mediaInputArgs): in ffprobe, the first frame (checkVideoLimits
 * would refuse it too, with the same message); in ffmpeg, a resolution that grew after the probe looked.
 * ffmpeg 5.1 drops such frames and goes on, exiting 0, so the run is refused here whatever its exit.
 */
function oversizedFrame(what: string, stderr: string): EngineError | null {
  const m = /Picture size (\d+)x(\d+) exceeds specified max pixel count (\d+)/.exec(stderr);
  if (m === null) return null;
  const [width, height, max] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return new EngineError(
    "REQUEST_BODY_TOO_LARGE",
    `the source video is ${width}×${height} (${((width * height) / 1e6).toFixed(1)} megapixels), over the limit of ${(max / 1e6).toFixed(1)} megapixels per frame`,
    { internal: `${what}: ${stderr}` },
  );
}

/** Turns a failed run into a public error; stderr goes only into `internal` for the log. */
export function failure(what: string, stderr: string): EngineError {
  const oversized = oversizedFrame(what, stderr);
  if (oversized !== null) return oversized;
  if (DECODE_FAILURES.some((re) => re.test(stderr))) {
    return unsupported("the source media is truncated or cannot be decoded", `${what}: ${stderr}`);
  }
  return new EngineError("INTERNAL", "media processing failed", { internal: `${what}: ${stderr}` });
}

/** Common leading arguments of every ffmpeg run. */
export const FFMPEG_BASE_ARGS = ["-hide_banner", "-nostdin", "-nostats", "-loglevel", "error", "-y"];

export interface FfmpegRun {
  signal: AbortSignal;
  /** Expected output duration, to turn ffmpeg's out_time into a 0..1 fraction. */
  durationSec?: number;
  onProgress?: (fraction: number) => void;
}

/** Turns ffmpeg's `-progress` lines into 0..1 fractions of the expected duration. */
function progressLines(opts: Omit<FfmpegRun, "signal">): (line: string) => void {
  const total = opts.durationSec ?? 0;
  return (line) => {
    const m = /^out_time_(?:us|ms)=(\d+)$/.exec(line);
    if (m !== null && total > 0 && opts.onProgress !== undefined) {
      opts.onProgress(Math.min(1, Number(m[1]) / 1e6 / total));
    }
  };
}

/** The outcome of an ffmpeg run: its stderr, or the public error of a failed run. */
function ffmpegOutcome(exit: Exit, opts: Omit<FfmpegRun, "signal">): string {
  if (exit.code !== 0) throw failure("ffmpeg", exit.stderr);
  const oversized = oversizedFrame("ffmpeg", exit.stderr);
  if (oversized !== null) throw oversized;
  opts.onProgress?.(1);
  return exit.stderr;
}

/** The full command line of an ffmpeg run of `args`. */
const ffmpegCommand = (args: readonly string[]): string[] => [
  ...FFMPEG_BASE_ARGS,
  ...["-progress", "pipe:1"],
  ...args,
];

/** Runs ffmpeg with `args` (which must include inputs and the output) and reports progress. */
export async function runFfmpeg(bin: string, args: readonly string[], opts: FfmpegRun): Promise<string> {
  const exit = await run(bin, ffmpegCommand(args), opts.signal, progressLines(opts));
  return ffmpegOutcome(exit, opts);
}

/**
 * Seconds from the first packet's presentation to the last one's end, of the one stream `map` selects from
 * the input `inputArgs` opens: the packets are listed (ffmpeg's framecrc muxer, stream copy, no decoding) and
 * read line by line. Null when ffmpeg fails or lists no packet.
 */
export async function packetSpan(
  bin: string,
  inputArgs: readonly string[],
  map: string,
  signal: AbortSignal,
): Promise<number | null> {
  let timeBase = 0;
  let first = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  const args = [...FFMPEG_BASE_ARGS, ...inputArgs, "-map", map, "-c", "copy", "-f", "framecrc", "pipe:1"];
  const exit = await run(bin, args, signal, (line) => {
    const tb = /^#tb 0: (\d+)\/(\d+)$/.exec(line);
    if (tb !== null) timeBase = Number(tb[1]) / Number(tb[2]);
    // stream, dts, pts, duration, size, crc
    const m = /^0,\s*-?\d+,\s*(-?\d+),\s*(\d+),/.exec(line);
    if (m === null) return;
    first = Math.min(first, Number(m[1]));
    end = Math.max(end, Number(m[1]) + Number(m[2]));
  });
  return exit.code === 0 && timeBase > 0 && end > first ? (end - first) * timeBase : null;
}

/**
 * Seconds of audio the stream `map` decodes to (what a player plays: edit lists, pre-skip and end trimming
 * applied, gaps in the timestamps not counted), or null when nothing decodes.
 */
export async function decodedSeconds(
  bin: string,
  inputArgs: readonly string[],
  map: string,
  signal: AbortSignal,
): Promise<number | null> {
  let timeBase = 0;
  let samples = 0;
  const args = [
    ...FFMPEG_BASE_ARGS,
    ...inputArgs,
    "-map",
    map,
    "-c:a",
    "pcm_s16le",
    "-f",
    "framecrc",
    "pipe:1",
  ];
  const exit = await run(bin, args, signal, (line) => {
    const tb = /^#tb 0: (\d+)\/(\d+)$/.exec(line);
    if (tb !== null) timeBase = Number(tb[1]) / Number(tb[2]);
    // stream, dts, pts, duration (samples for PCM at 1/sample_rate), size, crc
    const m = /^0,\s*-?\d+,\s*-?\d+,\s*(\d+),/.exec(line);
    if (m !== null) samples += Number(m[1]);
  });
  return exit.code === 0 && timeBase > 0 && samples > 0 ? samples * timeBase : null;
}

/** Where an input's packets end (packetsEnd). */
export interface PacketsEnd {
  /** Seconds, in the input's own timeline. */
  end: number;
  /**
   * Whether the packet that ends last is a video frame of unknown length (its duration a tick at most: a
   * WebM's single frame, shown until the header's end): its end then says only where it starts.
   */
  open: boolean;
}

/**
 * Where the streams `maps` of an input end: the latest end (presentation time + duration, in the input's own
 * timeline) of the packets that follow a seek far past the end, which lands on the last seek point (or
 * reads the whole input when it cannot seek: a truncated file without its index), or a seek to `from`
 * seconds (an FLV's seek past its end lands past its last packet). No decoding. Null when ffmpeg fails or
 * lists no packet. `inputArgs(before)` gives the input arguments with options before -i.
 * A duration written as a negative number (an Ogg page's end trimming after such a seek: 2^32 − 21504 ticks,
 * read as 97397 s) counts as none.
 */
export async function packetsEnd(
  bin: string,
  inputArgs: (before: readonly string[]) => string[],
  maps: readonly string[],
  signal: AbortSignal,
  from?: number,
): Promise<PacketsEnd | null> {
  const timeBases: number[] = [];
  const video = new Set<number>();
  let result = null as PacketsEnd | null;
  const args = [
    ...FFMPEG_BASE_ARGS,
    ...inputArgs(from === undefined ? ["-ss", "99999999"] : from > 0 ? ["-ss", from.toFixed(6)] : []),
    ...["-copyts", ...maps.flatMap((m) => ["-map", m]), "-c", "copy", "-f", "framecrc", "pipe:1"],
  ];
  const exit = await run(bin, args, signal, (line) => {
    const tb = /^#tb (\d+): (\d+)\/(\d+)$/.exec(line);
    if (tb !== null) timeBases[Number(tb[1])] = Number(tb[2]) / Number(tb[3]);
    if (/^#media_type (\d+): video$/.test(line)) video.add(Number(/\d+/.exec(line)![0]));
    // stream, dts, pts, duration, size, crc
    const m = /^(\d+),\s*-?\d+,\s*(-?\d+),\s*(\d+),/.exec(line);
    const timeBase = m === null ? undefined : timeBases[Number(m[1])];
    if (m === null || timeBase === undefined) return;
    const ticks = Number(m[3]) >= 2 ** 31 ? 0 : Number(m[3]);
    const end = (Number(m[2]) + ticks) * timeBase;
    if (result === null || end > result.end) {
      result = { end, open: video.has(Number(m[1])) && ticks <= 1 };
    }
  });
  return exit.code === 0 ? result : null;
}

/** An ffmpeg started ahead of its job (warm-ffmpeg.ts), waiting on its input. */
export interface WarmFfmpeg {
  child: ChildProcess;
  /** The full command line, as `adopt` traces it. */
  args: string[];
  /**
   * Hands the run to a job: its progress is reported from now on, and the promise settles like
   * runFfmpeg's once the process has exited.
   */
  adopt(opts: Omit<FfmpegRun, "signal">): Promise<string>;
  /** Settles when the process has exited (whatever the outcome). */
  exited: Promise<void>;
}

/** Starts ffmpeg without a job; `signal` kills it. Null when it could not even start. */
export function startWarmFfmpeg(
  bin: string,
  args: readonly string[],
  signal: AbortSignal,
): WarmFfmpeg | null {
  const full = ffmpegCommand(args);
  let onLine: (line: string) => void = () => {};
  const { child, exit } = start(bin, full, { signal, warm: true, onStdoutLine: (line) => onLine(line) });
  if (child === null) return null;
  exit.catch(() => {});
  return {
    child,
    args: full,
    exited: exit.then(
      () => {},
      () => {},
    ),
    adopt: (opts) => {
      adopt(child, bin, full);
      onLine = progressLines(opts);
      return exit.then((e) => ffmpegOutcome(e, opts));
    },
  };
}

export interface ProbeStream {
  index: number;
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  /** "num:den"; absent or "0:1" when the pixels are square or unknown. */
  sample_aspect_ratio?: string;
  pix_fmt?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  duration?: string;
  start_time?: string;
  /** "num/den": one tick, in seconds. */
  time_base?: string;
  sample_rate?: string;
  channels?: number;
  channel_layout?: string;
  bit_rate?: string;
  disposition?: Record<string, number>;
  tags?: Record<string, string>;
  side_data_list?: { rotation?: number; side_data_type?: string }[];
}

export interface ProbePacket {
  stream_index: number;
  pts_time?: string;
  dts_time?: string;
  flags?: string;
}

export interface ProbeOutput {
  streams?: ProbeStream[];
  format?: { duration?: string; start_time?: string; format_name?: string; size?: string; bit_rate?: string };
  packets?: ProbePacket[];
}

/** Common leading arguments of every ffprobe run (JSON on stdout, errors only on stderr). */
const FFPROBE_BASE_ARGS = ["-hide_banner", "-v", "error", "-of", "json"];

function probeOutput(exit: Exit): ProbeOutput {
  // A first frame beyond -max_pixels: ffprobe reports the stream without its size, or fails.
  const oversized = oversizedFrame("ffprobe", exit.stderr);
  if (oversized !== null) throw oversized;
  if (exit.code !== 0) {
    throw unsupported("the source media is truncated or cannot be decoded", `ffprobe: ${exit.stderr}`);
  }
  try {
    return JSON.parse(exit.stdout) as ProbeOutput;
  } catch {
    throw unsupported(
      "the source media cannot be read",
      `ffprobe printed invalid JSON: ${exit.stdout.slice(0, 200)}`,
    );
  }
}

/** Runs ffprobe with JSON output; a failure means the input could not be read as media. */
export async function runFfprobe(
  bin: string,
  args: readonly string[],
  signal: AbortSignal,
): Promise<ProbeOutput> {
  return probeOutput(await run(bin, [...FFPROBE_BASE_ARGS, ...args], signal));
}

/** An ffprobe started ahead of its job (warm-probe.ts): its process and its eventual answer. */
export interface WarmFfprobe {
  child: ChildProcess;
  /** The full command line, as `adopt` traces it. */
  args: string[];
  output: Promise<ProbeOutput>;
}

/** Starts ffprobe without a job; `signal` kills it. Null when it could not even start. */
export function startWarmFfprobe(
  bin: string,
  args: readonly string[],
  signal: AbortSignal,
): WarmFfprobe | null {
  const full = [...FFPROBE_BASE_ARGS, ...args];
  const { child, exit } = start(bin, full, { signal, warm: true });
  if (child === null) return null;
  return { child, args: full, output: exit.then(probeOutput) };
}

/** First line of `<bin> -version`, for /v1/health; null when the binary does not run. */
export async function versionLine(bin: string): Promise<string | null> {
  try {
    const exit = await run(bin, ["-version"], new AbortController().signal);
    const line = exit.stdout.split("\n")[0]?.trim() ?? "";
    return exit.code === 0 && line !== "" ? line : null;
  } catch {
    return null;
  }
}
