/**
 * Independent measurements of media files for the corpus harness: ffprobe's view of the streams, and what a
 * player presents (decoded audio samples, decoded video frames), with the MP4 edit list honoured and ignored.
 * Nothing here uses the engine's own code, so a result is never checked against the code that produced it.
 */
import { spawn } from "node:child_process";

export interface Bins {
  ffmpeg: string;
  ffprobe: string;
}

interface Exit {
  code: number | null;
  stdout: Buffer;
  bytes: number;
  stderr: string;
}

/** Runs a binary; stdout is kept up to `keep` bytes and counted in full. */
function run(bin: string, args: readonly string[], keep = 16 * 1024 * 1024): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    let kept = 0;
    let bytes = 0;
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      bytes += c.length;
      if (kept < keep) {
        chunks.push(c);
        kept += c.length;
      }
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr = (stderr + c.toString()).slice(-4000);
    });
    child.on("error", (err) => {
      stderr += String(err);
    });
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(chunks), bytes, stderr }));
  });
}

export interface ProbedStream {
  index: number;
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  sample_aspect_ratio?: string;
  pix_fmt?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  duration?: string;
  start_time?: string;
  channels?: number;
  channel_layout?: string;
  sample_rate?: string;
  disposition?: Record<string, number>;
  tags?: Record<string, string>;
  side_data_list?: { rotation?: number }[];
}

export interface Probed {
  format?: { format_name?: string; duration?: string; start_time?: string };
  streams?: ProbedStream[];
}

/** ffprobe -show_format -show_streams; null when ffprobe cannot read the file. */
export async function probe(bins: Bins, file: string): Promise<Probed | null> {
  const exit = await run(bins.ffprobe, [
    ...["-v", "error", "-of", "json", "-show_format", "-show_streams", file],
  ]);
  if (exit.code !== 0) return null;
  try {
    return JSON.parse(exit.stdout.toString()) as Probed;
  } catch {
    return null;
  }
}

const num = (v: string | undefined): number | null => {
  const n = Number(v);
  return v !== undefined && v !== "N/A" && v !== "" && Number.isFinite(n) ? n : null;
};

export const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

export function reduceRate(rate: string | undefined): string | null {
  const m = /^(\d+)\/(\d+)$/.exec(rate ?? "");
  if (m === null || Number(m[1]) === 0 || Number(m[2]) === 0) return null;
  const g = gcd(Number(m[1]), Number(m[2]));
  return `${Number(m[1]) / g}/${Number(m[2]) / g}`;
}

export interface VideoFacts {
  index: number;
  codec: string;
  /**
   * Size as a player shows it (what the API reports as width/height): the width stretched by the sample
   * aspect ratio, rounded, then rotation applied.
   */
  width: number;
  height: number;
  /** Coded size with rotation applied (an image's pixels). */
  codedWidth: number;
  codedHeight: number;
  /** Sample aspect ratio (1 for square pixels or none stated). */
  sar: number;
  /** Width/height as shown: rotation and sample aspect ratio applied. */
  displayAspect: number;
  fps: string;
  fpsValue: number;
  hasAlpha: boolean;
}

export interface AudioFacts {
  index: number;
  codec: string;
  channels: number;
  layout: string;
  sampleRate: number;
}

export interface StreamsFacts {
  formatName: string;
  duration: number | null;
  startTime: number;
  video: VideoFacts | null;
  audio: AudioFacts | null;
}

function rotation(s: ProbedStream): number {
  const side = s.side_data_list?.find((d) => typeof d.rotation === "number")?.rotation;
  return side ?? num(s.tags?.rotate) ?? 0;
}

export function streamsFacts(p: Probed): StreamsFacts {
  const streams = p.streams ?? [];
  const v = streams.find(
    (s) => s.codec_type === "video" && (s.disposition?.attached_pic ?? 0) === 0 && (s.width ?? 0) > 0,
  );
  const a = streams.find((s) => s.codec_type === "audio");
  let video: VideoFacts | null = null;
  if (v !== undefined) {
    const quarter = Math.abs(rotation(v)) % 180 === 90;
    const w = v.width ?? 0;
    const h = v.height ?? 0;
    const sar = /^(\d+):(\d+)$/.exec(v.sample_aspect_ratio ?? "");
    const sarValue =
      sar !== null && Number(sar[1]) > 0 && Number(sar[2]) > 0 ? Number(sar[1]) / Number(sar[2]) : 1;
    const aspect = (w * sarValue) / h;
    const fps = reduceRate(v.avg_frame_rate) ?? reduceRate(v.r_frame_rate) ?? "0/1";
    const [fn, fd] = fps.split("/").map(Number);
    const tags = Object.entries(v.tags ?? {});
    const shownW = Math.max(1, Math.round(w * sarValue));
    video = {
      index: v.index,
      codec: v.codec_name ?? "unknown",
      width: quarter ? h : shownW,
      height: quarter ? shownW : h,
      codedWidth: quarter ? h : w,
      codedHeight: quarter ? w : h,
      sar: sarValue,
      displayAspect: quarter ? 1 / aspect : aspect,
      fps,
      fpsValue: (fn ?? 0) / (fd || 1),
      hasAlpha:
        /^(yuva|gbrap|ya\d|ayuv)|rgba|bgra|argb|abgr/.test(v.pix_fmt ?? "") ||
        tags.some(([k, val]) => k.toLowerCase() === "alpha_mode" && val === "1"),
    };
  }
  return {
    formatName: p.format?.format_name ?? "",
    duration: num(p.format?.duration) ?? num(v?.duration) ?? num(a?.duration),
    startTime: num(p.format?.start_time) ?? 0,
    video,
    audio:
      a === undefined
        ? null
        : {
            index: a.index,
            codec: a.codec_name ?? "unknown",
            channels: a.channels ?? 0,
            layout: a.channel_layout ?? "",
            sampleRate: Number(a.sample_rate ?? 0),
          },
  };
}

/** Demuxer options that make the MP4 demuxer ignore edit lists (what many players do). */
const IGNORE_EDITLIST = ["-ignore_editlist", "1"];

/**
 * Seconds of audio a player presents: the samples the first audio stream decodes to (after edit lists,
 * pre-skip and end trimming), counted at 48 kHz mono. Null when it does not decode.
 */
export async function audioPresented(
  bins: Bins,
  file: string,
  opts: { ignoreEditlist?: boolean; stream?: number } = {},
): Promise<number | null> {
  const map = opts.stream === undefined ? "0:a:0" : `0:${opts.stream}`;
  const exit = await run(
    bins.ffmpeg,
    [
      ...["-v", "error", "-nostdin", ...(opts.ignoreEditlist === true ? IGNORE_EDITLIST : []), "-i", file],
      ...["-map", map, "-ac", "1", "-ar", "48000", "-f", "s16le", "pipe:1"],
    ],
    0,
  );
  if (exit.code !== 0) return null;
  return exit.bytes / 2 / 48000;
}

export interface VideoPresented {
  frames: number;
  /** From the first frame's time to the last frame's end. */
  duration: number;
  first: number;
}

/** The decoded frames of the first video stream (times as presented). Null when it does not decode. */
export async function videoPresented(
  bins: Bins,
  file: string,
  opts: { ignoreEditlist?: boolean; stream?: number } = {},
): Promise<VideoPresented | null> {
  const select = opts.stream === undefined ? "v:0" : String(opts.stream);
  const exit = await run(bins.ffprobe, [
    ...["-v", "error", ...(opts.ignoreEditlist === true ? IGNORE_EDITLIST : [])],
    ...["-select_streams", select, "-show_entries", "frame=best_effort_timestamp_time,pkt_duration_time"],
    ...["-of", "csv=p=0", file],
  ]);
  if (exit.code !== 0) return null;
  const rows = exit.stdout
    .toString()
    .split("\n")
    .map((l) => l.split(",").map((x) => num(x.trim())))
    .filter((r) => r[0] !== null && r[0] !== undefined) as (number | null)[][];
  if (rows.length === 0) return { frames: 0, duration: 0, first: 0 };
  const times = rows.map((r) => r[0]!);
  const first = Math.min(...times);
  const lastRow = rows.reduce((a, b) => (b[0]! > a[0]! ? b : a));
  const lastDur = lastRow[1] ?? (rows.length > 1 ? (Math.max(...times) - first) / (rows.length - 1) : 0);
  return { frames: rows.length, duration: lastRow[0]! + lastDur - first, first };
}

export const THUMB = { width: 64, height: 36 };

/**
 * The frame shown at `time` (seconds from the start as presented), as 64×36 grayscale; an image file is
 * read as its one frame. Null when nothing decodes there.
 */
export async function thumbnail(bins: Bins, file: string, time: number | null): Promise<Buffer | null> {
  const exit = await run(bins.ffmpeg, [
    ...["-v", "error", "-nostdin", ...(time === null ? [] : ["-ss", time.toFixed(3)]), "-i", file],
    ...["-map", "0:v:0", "-frames:v", "1", "-vf", `scale=${THUMB.width}:${THUMB.height},format=gray`],
    ...["-f", "rawvideo", "pipe:1"],
  ]);
  return exit.code === 0 && exit.stdout.length === THUMB.width * THUMB.height ? exit.stdout : null;
}

/** Mean absolute difference (0–255) of two thumbnails over rows [fromRow, toRow). */
export function thumbDiff(a: Buffer, b: Buffer, fromRow = 0, toRow = THUMB.height): number {
  let sum = 0;
  for (let i = fromRow * THUMB.width; i < toRow * THUMB.width; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / ((toRow - fromRow) * THUMB.width);
}

/** Whether the whole file decodes without errors (every stream). */
export async function decodesCleanly(bins: Bins, file: string): Promise<string | null> {
  const exit = await run(bins.ffmpeg, ["-v", "error", "-nostdin", "-i", file, "-f", "null", "-"], 0);
  if (exit.code !== 0) return `does not decode (${exit.stderr.split("\n")[0]?.slice(0, 80)})`;
  return null;
}

// ---------------------------------------------------------------------------------------------------------
// Frame- and sample-level truth (issue 29): what a player presents, frame by frame and sample by sample, read
// from the decoders only. Times are the decoder's best-effort timestamps (edit lists honoured unless asked
// otherwise); callers subtract the file's start time themselves.

/** One decoded video frame: its presentation time, its duration (null when none is stated) and its index in
 * decode output order (the `n` of ffmpeg's select filter). */
export interface Frame {
  t: number;
  d: number | null;
  n: number;
}

/** The decoded frames of a video stream, sorted by time. Null when it does not decode. */
export async function decodedFrames(
  bins: Bins,
  file: string,
  opts: { ignoreEditlist?: boolean; stream?: number } = {},
): Promise<Frame[] | null> {
  const select = opts.stream === undefined ? "v:0" : String(opts.stream);
  const exit = await run(
    bins.ffprobe,
    [
      ...["-v", "error", ...(opts.ignoreEditlist === true ? IGNORE_EDITLIST : [])],
      ...["-select_streams", select, "-show_entries", "frame=best_effort_timestamp_time,pkt_duration_time"],
      ...["-of", "csv=p=0", file],
    ],
    256 * 1024 * 1024,
  );
  if (exit.code !== 0) return null;
  const frames: Frame[] = [];
  let n = 0;
  for (const line of exit.stdout.toString().split("\n")) {
    if (line.trim() === "") continue;
    const [t, d] = line.split(",").map((x) => num(x.trim()));
    if (t !== null && t !== undefined) frames.push({ t, d: d ?? null, n });
    n++;
  }
  return frames.sort((a, b) => a.t - b.t || a.n - b.n);
}

/** Where the last frame stops being shown: its time plus its duration (else the median frame gap). */
export function framesEnd(frames: readonly Frame[]): number {
  if (frames.length === 0) return 0;
  const last = frames[frames.length - 1]!;
  return last.t + (last.d ?? medianGap(frames));
}

export function medianGap(frames: readonly Frame[]): number {
  const gaps = frames
    .slice(1)
    .map((f, i) => f.t - frames[i]!.t)
    .filter((g) => g > 0)
    .sort((a, b) => a - b);
  return gaps.length === 0 ? (frames[0]?.d ?? 0.04) : gaps[Math.floor(gaps.length / 2)]!;
}

/** Presentation times of the key packets (flag K, not D: not discarded behind an edit list) of a stream. */
export async function keyPacketTimes(bins: Bins, file: string, stream: number): Promise<number[]> {
  const exit = await run(
    bins.ffprobe,
    [
      ...["-v", "error", "-select_streams", String(stream), "-show_entries", "packet=pts_time,flags"],
      ...["-of", "csv=p=0", file],
    ],
    256 * 1024 * 1024,
  );
  const times: number[] = [];
  for (const line of exit.stdout.toString().split("\n")) {
    const [pts, flags] = line.split(",").map((x) => x.trim());
    const t = num(pts);
    if (t !== null && flags?.includes("K") && !flags.includes("D")) times.push(t);
  }
  return times.sort((a, b) => a - b);
}

/** A stream's time base in seconds (one tick). */
export async function timeBase(bins: Bins, file: string, stream: number | string): Promise<number> {
  const exit = await run(bins.ffprobe, [
    ...["-v", "error", "-select_streams", String(stream), "-show_entries", "stream=time_base"],
    ...["-of", "csv=p=0", file],
  ]);
  const m = /^(\d+)\/(\d+)/.exec(exit.stdout.toString().trim());
  return m === null || Number(m[2]) === 0 ? 0.001 : Number(m[1]) / Number(m[2]);
}

/** The decoded audio of a stream, counted sample by sample. */
export interface AudioTrack {
  /** Time of the first decoded sample (after the decoder's skip of priming), seconds. */
  first: number;
  /** first + decoded samples / rate. */
  decodedEnd: number;
  /** The last frame's time plus its stated duration: where a container's declared padding ends it. */
  declaredEnd: number | null;
  sampleRate: number;
  samples: number;
  /** Longest decoded frame, seconds. */
  frameSec: number;
  /** Samples of each decoded frame, in order. */
  frames: number[];
}

export async function decodedAudio(
  bins: Bins,
  file: string,
  opts: { ignoreEditlist?: boolean; stream?: number } = {},
): Promise<AudioTrack | null> {
  const select = opts.stream === undefined ? "a:0" : String(opts.stream);
  const exit = await run(
    bins.ffprobe,
    [
      ...["-v", "error", ...(opts.ignoreEditlist === true ? IGNORE_EDITLIST : [])],
      ...["-select_streams", select, "-show_entries"],
      "stream=sample_rate:frame=best_effort_timestamp_time,pkt_duration_time,nb_samples",
      ...["-of", "compact", file],
    ],
    256 * 1024 * 1024,
  );
  if (exit.code !== 0) return null;
  let first: number | null = null;
  let samples = 0;
  let rate = 0;
  let declared: number | null = null;
  let frameSamples = 0;
  const frames: number[] = [];
  for (const line of exit.stdout.toString().split("\n")) {
    const kv = new Map(line.split("|").map((c) => c.split("=", 2) as [string, string]));
    if (line.startsWith("stream|")) rate = Number(kv.get("sample_rate") ?? 0);
    if (!line.startsWith("frame|")) continue;
    const nb = Number(kv.get("nb_samples") ?? 0);
    samples += nb;
    frames.push(nb);
    frameSamples = Math.max(frameSamples, nb);
    const t = num(kv.get("best_effort_timestamp_time"));
    const d = num(kv.get("pkt_duration_time"));
    if (t !== null && first === null) first = t;
    if (t !== null && d !== null) declared = Math.max(declared ?? Number.NEGATIVE_INFINITY, t + d);
  }
  if (rate === 0 || samples === 0) return null;
  const start = first ?? 0;
  return {
    first: start,
    decodedEnd: start + samples / rate,
    declaredEnd: declared,
    sampleRate: rate,
    samples,
    frameSec: frameSamples / rate,
    frames,
  };
}

/** MPEG audio layers by the two layer bits of a frame header (ISO/IEC 11172-3, 2.4.2.3): 3 is layer I. */
const LAYERS: Record<number, string> = { 3: "mp1", 2: "mp2", 1: "mp3" };

/**
 * The MPEG audio layer of stream `stream`'s first packet ("mp1", "mp2" or "mp3"), read from its frame header;
 * null when the packet does not begin with one. An MP4 names MPEG-1 and MPEG-2 audio by object type (0x6B,
 * 0x69) whatever the layer, and ffmpeg 5.1 reads both as mp3: Layer II in an M4A is probed as mp3.
 */
export async function mpegAudioLayer(bins: Bins, file: string, stream: number): Promise<string | null> {
  const exit = await run(bins.ffmpeg, [
    ...["-v", "error", "-nostdin", "-i", file, "-map", `0:${stream}`, "-c", "copy", "-frames:a", "1"],
    ...["-f", "data", "pipe:1"],
  ]);
  const b = exit.stdout;
  if (exit.code !== 0 || b.length < 4 || b[0] !== 0xff || (b[1]! & 0xe0) !== 0xe0) return null;
  return LAYERS[(b[1]! >> 1) & 3] ?? null;
}

export const PCM_RATE = 8000;

/** The audio stream decoded to mono s16 at 8 kHz, from its first sample. */
export async function pcm8k(bins: Bins, file: string, stream?: number): Promise<Int16Array | null> {
  const map = stream === undefined ? "0:a:0" : `0:${stream}`;
  const exit = await run(
    bins.ffmpeg,
    [
      ...["-v", "error", "-nostdin", "-i", file, "-map", map, "-ac", "1", "-ar", String(PCM_RATE)],
      ...["-f", "s16le", "pipe:1"],
    ],
    256 * 1024 * 1024,
  );
  if (exit.code !== 0 || exit.bytes < 2) return null;
  const buf = exit.stdout;
  const out = new Int16Array(Math.floor(buf.length / 2));
  for (let i = 0; i < out.length; i++) out[i] = buf.readInt16LE(i * 2);
  return out;
}

/**
 * Where `part` sits in `whole` around sample `at` (searching ±`maxLag` samples): the lag of the best
 * normalized cross-correlation and its value (−1…1), and the best value within ±`nearLag` of `at` (a
 * periodic signal, such as a test tone, correlates as well one period away). Null when either is silent.
 */
export function bestLag(
  whole: Int16Array,
  at: number,
  part: Int16Array,
  maxLag: number,
  nearLag: number,
): { lag: number; corr: number; near: number } | null {
  const sample = (i: number) => (i >= 0 && i < whole.length ? whole[i]! : 0);
  let partEnergy = 0;
  for (const v of part) partEnergy += v * v;
  if (Math.sqrt(partEnergy / Math.max(1, part.length)) < 64) return null;
  let best = { lag: 0, corr: Number.NEGATIVE_INFINITY, near: Number.NEGATIVE_INFINITY };
  let anyEnergy = false;
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    let dot = 0;
    let energy = 0;
    const base = at + lag;
    for (let i = 0; i < part.length; i++) {
      const w = sample(base + i);
      dot += w * part[i]!;
      energy += w * w;
    }
    if (energy === 0) continue;
    anyEnergy = true;
    const corr = dot / Math.sqrt(energy * partEnergy);
    if (Math.abs(lag) <= nearLag) best.near = Math.max(best.near, corr);
    if (corr > best.corr) best = { ...best, lag, corr };
  }
  return anyEnergy ? best : null;
}

export const GRAY = { width: 128, height: 72 };

/** Frames `ns` (decode output indices, see Frame.n) of a video stream, each 128×72 grayscale. */
export async function grayFrames(
  bins: Bins,
  file: string,
  ns: readonly number[],
  stream?: number,
): Promise<Map<number, Buffer>> {
  const wanted = [...new Set(ns)].sort((a, b) => a - b);
  const result = new Map<number, Buffer>();
  if (wanted.length === 0) return result;
  const expr = wanted.map((n) => `eq(n\\,${n})`).join("+");
  const size = GRAY.width * GRAY.height;
  const exit = await run(
    bins.ffmpeg,
    [
      ...["-v", "error", "-nostdin", "-i", file, "-map", stream === undefined ? "0:v:0" : `0:${stream}`],
      ...["-vf", `select='${expr}',scale=${GRAY.width}:${GRAY.height},format=gray`, "-vsync", "0"],
      ...["-f", "rawvideo", "pipe:1"],
    ],
    (wanted.length + 1) * size,
  );
  if (exit.code !== 0) return result;
  wanted.forEach((n, i) => {
    if ((i + 1) * size <= exit.stdout.length) result.set(n, exit.stdout.subarray(i * size, (i + 1) * size));
  });
  return result;
}

/** PSNR (dB, capped at 99) of two gray frames over rows [0, rows). */
export function psnr(a: Buffer, b: Buffer, rows = GRAY.height): number {
  let sum = 0;
  const count = rows * GRAY.width;
  for (let i = 0; i < count; i++) {
    const d = a[i]! - b[i]!;
    sum += d * d;
  }
  if (sum === 0) return 99;
  return Math.min(99, 10 * Math.log10((255 * 255) / (sum / count)));
}
