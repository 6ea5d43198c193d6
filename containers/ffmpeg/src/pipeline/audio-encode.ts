/**
 * The audio filter chain of an encode (audio.trim, video.extract-audio): timestamps counted from the
 * samples, and AAC in MP4 aligned so that a decoder plays exactly the samples it was given.
 *
 * - A source's timestamps may not describe its samples (1-tick ALAC packets, a fragmented MP4's early first
 *   AAC packet): an encode stamps each sample by its position (`asetpts=round(N/SR/TB)`), so the output's header
 *   states the samples it holds.
 * - The AAC encoder primes 1024 samples, which the MP4 edit list hides, and pads the last frame to 1024
 *   samples; the edit list's duration declares that padding, but ffmpeg 5.1 (and other decoders) play the
 *   last frame whole: up to 128 ms more at 8 kHz. So the encode is given K samples of silence first, K
 *   making priming + K + samples a whole number of frames: no padding at the end, and the edit list's start
 *   (1024 + K), which every decoder that honours edit lists applies sample-exactly, hides the silence. The
 *   count of samples comes from a first, decode-only pass (countSamples).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { EncoderFrame } from "./containers.ts";
import { runFfprobe } from "./ffmpeg.ts";
import { mediaInputArgs } from "./input-args.ts";
import { emptyOutput, type Input, type JobContext, preferSourceError } from "./job.ts";
import type { AudioInfo } from "./media-info.ts";
import { hasFragments } from "./mp4-boxes.ts";
import { sec } from "./params.ts";

/** Samples per AAC-LC frame. */
const AAC_FRAME = 1024;

/** Sample rates ffmpeg's AAC encoder takes. */
export const AAC_RATES = [
  7350, 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000,
] as const;

/** The rate ffmpeg's AAC encoder would encode `rate` at: the same, else the nearest higher one it takes. */
export function aacRate(rate: number): number {
  return AAC_RATES.find((r) => r >= rate) ?? 96000;
}

/**
 * Stamps samples by their count from the first one: the output's timeline is its samples. Rounded: asetpts
 * truncates its expression, and N/SR/TB in a time base of 1/SR is N − 10⁻¹² for some N (1,012 samples
 * became 1,011 ticks, so fixture.avi's cut frames overlapped by a sample and the encode's MP4 declared one
 * sample less than the count its alignment was made for).
 */
export const STAMP_BY_SAMPLES = "asetpts=round(N/SR/TB)";

/**
 * Stamps samples by their count from the first frame's time: a window is then cut by sample positions from
 * where the decode began (a seek point, or the stream's start), whatever the timestamps of the frames after
 * it say (Matroska lacing and WAV packets of several blocks leave most frames without one, which ffmpeg then
 * guesses).
 */
export const STAMP_FROM_FIRST = "asetpts=STARTPTS+round(N/SR/TB)";

/** How a source's audio frames are timed, read from its first frames (audioTiming). */
export interface AudioTiming {
  /**
   * Whether the frames' timestamps follow their samples (each known one at the previous known one plus the
   * samples between them, within 1 ms): false for ALAC whose packets sit 1 tick apart (alac.m4a), where a
   * seek lands on the wrong packet and a copy's header states the wrong length.
   */
  timesHold: boolean;
  /** Whether frames without a timestamp were read (Matroska lacing, WAV packets of several blocks). */
  unstamped: boolean;
  /**
   * Whether no frame read states its length (CAF's packets): a copy's last packet then has none, and an M4A
   * declares it lasting nothing (alac.caf of the media matrix: its last 640 samples, 13 ms, not declared).
   */
  untimed: boolean;
  /**
   * Whether the timestamps are coarser than half a millisecond (Matroska's 1 ms): a copy into MP4 times each
   * packet by the difference to the next, and ends the last one early (matroska-test5-short.mkv's AAC
   * declared 11 ms less than its samples).
   */
  coarse: boolean;
  /** Samples per frame when every frame read has the same count (ALAC, AAC, MP3…), else null. */
  frameSize: number | null;
  /** The first frame's time, seconds on the stream's timeline (its demuxer's timestamps); null when unknown. */
  first: number | null;
}

/** Frames read by audioTiming. */
const TIMING_FRAMES = 24;

/** Reads how the first frames of audio stream `index` are timed (a decode of a few packets). */
export async function audioTiming(ctx: JobContext, input: Input, index: number): Promise<AudioTiming> {
  // A source whose first frames do not decode is left to the operation's own decode to refuse.
  const probe = await runFfprobe(
    ctx.config.binaries.ffprobe,
    [
      ...["-select_streams", String(index), "-read_intervals", `%+#${TIMING_FRAMES}`],
      ...["-show_entries", "frame=pts,pkt_duration,nb_samples:stream=time_base,sample_rate", ...input.args()],
    ],
    ctx.signal,
  ).catch((err: unknown) => {
    if (ctx.signal.aborted) throw err;
    return null;
  });
  const unknown = {
    timesHold: true,
    unstamped: false,
    untimed: false,
    coarse: false,
    frameSize: null,
    first: null,
  };
  if (probe === null) return unknown;
  const stream = probe.streams?.[0] as { time_base?: string; sample_rate?: string } | undefined;
  const tb = /^(\d+)\/(\d+)$/.exec(stream?.time_base ?? "");
  const rate = Number(stream?.sample_rate ?? 0);
  type Frame = { pts?: number | string; pkt_duration?: number | string; nb_samples?: number };
  const value = (v: number | string | undefined) => (v === undefined || v === "N/A" ? null : Number(v));
  const frames = ((probe as { frames?: Frame[] }).frames ?? []).map((f) => ({
    pts: value(f.pts),
    duration: value(f.pkt_duration),
    n: Number(f.nb_samples ?? 0),
  }));
  if (tb === null || rate <= 0 || frames.length === 0) return unknown;
  const tick = Number(tb[1]) / Number(tb[2]);
  let timesHold = true;
  let known: { t: number; samples: number } | null = null;
  let samples = 0;
  for (const f of frames) {
    if (f.pts !== null && Number.isFinite(f.pts)) {
      const t = f.pts * tick;
      if (known !== null && Math.abs(t - (known.t + (samples - known.samples) / rate)) > 0.001 + tick) {
        timesHold = false;
      }
      known = { t, samples };
    }
    samples += f.n;
  }
  const sizes = new Set(frames.slice(0, -1).map((f) => f.n));
  const frameSize = sizes.size === 1 ? frames[0]!.n : null;
  return {
    timesHold,
    unstamped: frames.some((f) => f.pts === null),
    untimed: frames.every((f) => f.duration === null),
    coarse: tick >= 0.0005,
    frameSize,
    first: frames[0]!.pts === null ? null : frames[0]!.pts * tick,
  };
}

/**
 * Filters that put `silence` samples before the audio, the first sample of the audio still at `at` seconds
 * (0 unless given; the silence before it, which the MP4 muxer hides behind the edit list). adelay restamps
 * from 0, so the audio is stamped by its samples from `at`.
 */
export function leadingSilence(silence: number, at = 0): string[] {
  if (silence === 0) return [];
  return [
    `adelay=delays=${silence}S:all=1`,
    `asetpts=round((N-${silence})/SR/TB${at === 0 ? "" : `+${sec(at)}/TB`})`,
  ];
}

/**
 * Filters (after the cut) and output options with which an encoder that delays its output (EncoderFrame:
 * AC-3, E-AC-3, MP2, DTS) gives an MP4 that presents exactly the `samples` it is fed, the first one at `at`
 * seconds: silence before them so that delay + silence + samples is whole frames (no padding after them), the
 * delay's worth of silence after them, which the encoder keeps back, and its first packet stamped at −delay
 * where it does not state that itself. The MP4 muxer's edit list starts after the delay and the silence.
 */
export function frameAligned(
  frame: EncoderFrame,
  samples: number,
  at = 0,
): { filters: string[]; options: string[] } {
  const silence = (frame.size - ((samples + frame.delay) % frame.size)) % frame.size;
  return {
    filters: [...leadingSilence(silence, at), `apad=pad_len=${frame.delay}`],
    options: frame.stated ? [] : ["-bsf:a", `setts=ts=TS-${frame.delay}`],
  };
}

/** Silence to put before `samples` for an AAC encode that ends on a frame boundary. */
export const aacAlignment = (samples: number): number => (AAC_FRAME - (samples % AAC_FRAME)) % AAC_FRAME;

/**
 * The number of samples of ffmpeg's output `outputArgs` (-map, -af, -ar, -ac …: no codec, no output) of
 * `inputArgs`: decoded to PCM, its packets listed (framecrc) into the job's directory and added up. Run
 * like the encode (ctx.runFfmpeg), so that a command that comes again may be run by a warm process. Throws
 * the source's failure when a read was cut short, else a 415 saying `why` when it holds no sample.
 */
export async function countSamples(
  ctx: JobContext,
  input: Input,
  inputArgs: readonly string[],
  outputArgs: readonly string[],
  why: string,
): Promise<number> {
  return (await countAudio(ctx, input, inputArgs, outputArgs, why)).samples;
}

/**
 * countSamples, and the time of the first sample on the output's timeline (seconds). With `why` null no
 * sample is an answer (0), not a refusal: a video's window may hold no audio.
 */
export async function countAudio(
  ctx: JobContext,
  input: Input,
  inputArgs: readonly string[],
  outputArgs: readonly string[],
  why: string | null,
): Promise<{ samples: number; first: number }> {
  const list = path.join(ctx.dir, "samples.framecrc");
  await ctx
    .runFfmpeg([...inputArgs, ...outputArgs, "-c:a", "pcm_s16le", "-f", "framecrc", list], {
      signal: ctx.signal,
    })
    .catch((err: unknown) => preferSourceError(input, err));
  let samples = 0;
  let first: number | null = null;
  let tick = 0;
  for (const line of (await readFile(list, "latin1")).split("\n")) {
    // "#tb 0: 1/8000": the PCM stream's time base, 1/sample_rate.
    const tb = /^#tb 0: (\d+)\/(\d+)/.exec(line);
    if (tb !== null) tick = Number(tb[1]) / Number(tb[2]);
    // stream, dts, pts, duration (samples: PCM packets are timed in 1/sample_rate), size, crc
    const m = /^0,\s*-?\d+,\s*(-?\d+),\s*(\d+),/.exec(line);
    if (m === null) continue;
    first ??= Number(m[1]) * tick;
    samples += Number(m[2]);
  }
  const { source } = input;
  const cut = source.readerCutShort !== null || source.error !== null || source.rangeError !== null;
  if (cut || (samples === 0 && why !== null)) {
    throw emptyOutput(input, why ?? "the source has no decodable audio");
  }
  return { samples, first: first ?? 0 };
}

/**
 * Arguments (-af, -ar, codec) of an AAC encode into MP4 of the audio that `filters` give on the output's
 * timeline (video.trim, video.watermark: the same audio machinery as extract-audio's M4A): at the rate the
 * encoder takes, resampled in the chain so that the samples counted are the ones encoded, and aligned
 * (aacAlignment) so that a decoder plays exactly those samples, the first one where the chain put it. One
 * decode-only pass of `inputArgs` counts them (countAudio).
 */
export async function exactAacArgs(
  ctx: JobContext,
  input: Input,
  inputArgs: readonly string[],
  audio: AudioInfo,
  filters: readonly string[],
  bitrate: string,
): Promise<string[]> {
  const chain = [...filters];
  const rate = audio.sampleRate > 0 ? aacRate(audio.sampleRate) : null;
  if (rate !== null && rate !== audio.sampleRate) chain.push(`aresample=${rate}`);
  const shape = rate === null ? [] : ["-ar", String(rate)];
  const map = ["-map", `0:${audio.index}`, "-vn", "-sn", "-dn"];
  const { samples, first } = await countAudio(
    ctx,
    input,
    inputArgs,
    [...map, "-af", chain.join(","), ...shape],
    null,
  );
  chain.push(...leadingSilence(aacAlignment(samples), first));
  return ["-af", chain.join(","), ...shape, "-c:a", "aac", "-b:a", bitrate];
}

/**
 * Codec arguments of a stream copy of `audio`: its packets as they are (the last one lasting as `tail`
 * says: fragmentedTail), restamped by their samples when their timestamps do not follow them, are missing or
 * are rounded to the millisecond, or no packet states its length, and every frame holds the same count (ALAC 1 tick apart, or laced in Matroska: the copy's header would state 4.8 s for 5.6 s of
 * samples; AAC from Matroska: 11 ms less).
 */
export function copyArgs(audio: AudioInfo, timing: AudioTiming, tail: StatedTail | null = null): string[] {
  const size = timing.frameSize;
  if (!restamps(timing) || audio.sampleRate <= 0) {
    return ["-c:a", "copy", ...(tail === null ? [] : ["-bsf:a", `setts=${lastPacketLasts(tail)}`])];
  }
  // Lossless ALAC is encoded again, sample for sample, stamped by its samples: a copy restamped by whole
  // frames would state a short last frame whole.
  if (audio.codec === "alac") return ["-af", STAMP_BY_SAMPLES, "-c:a", "alac"];
  if (size === null) return ["-c:a", "copy"];
  return ["-c:a", "copy", "-bsf:a", `setts=ts=N*${size}:duration=${size}:time_base=1/${audio.sampleRate}`];
}

/** Whether a copy of audio timed so is restamped by its samples (copyArgs). */
const restamps = (timing: AudioTiming): boolean =>
  !timing.timesHold || timing.unstamped || timing.untimed || timing.coarse;

/**
 * An AAC copy for an MP4 beside encoded video (video.watermark), restamped by its samples where copyArgs
 * restamps (matroska-test5-short.mkv's AAC, timed in milliseconds, was declared to end 12 ms before its
 * samples): copied with copyArgs into an M4A of the job's directory first, which the final mux copies again
 * from `at` seconds (the first packet's time on the output's timeline: the audio keeps its place against
 * the video). Returns that M4A's input arguments, or null when copyArgs copies the packets as they are. Not
 * one step: with an encoded video beside it, ffmpeg 5.1 takes a restamping filter's packets in the
 * source's time base (1/1000 s in Matroska), not in the one it states (1/sample rate).
 */
export async function restampedAacInput(
  ctx: JobContext,
  input: Input,
  audio: AudioInfo,
  timing: AudioTiming,
  sourceArgs: readonly string[],
  at: number,
): Promise<string[] | null> {
  const codec = copyArgs(audio, timing);
  if (!codec.includes("-bsf:a")) return null;
  const file = path.join(ctx.dir, "audio-copy.m4a");
  await ctx
    .runFfmpeg(
      [...sourceArgs, "-map", `0:${audio.index}`, "-vn", "-sn", "-dn", ...codec, "-f", "mp4", file],
      { signal: ctx.signal },
    )
    .catch((err: unknown) => preferSourceError(input, err));
  return ["-itsoffset", sec(at), ...mediaInputArgs("mov", `file:${file}`)];
}

interface EndPacket {
  pts_time?: string;
  duration_time?: string;
}

/** Seconds before the stated end whose packets statedAudioEnd lists. */
const END_LOOKBACK = 2;

/**
 * Where an MP4/MOV states that audio stream `index` ends, when that is inside its last packet (the encoder's
 * padding, which the edit list or the last sample's duration declares and ffmpeg 5.1 decodes anyway):
 * seconds on ffmpeg's timeline of the input (from its format start). Null for other containers, and when
 * the stated end is not inside the last packet (alac.m4a's header ends 0.8 s before its samples: a broken
 * timestamp, not padding).
 */
export async function statedAudioEnd(ctx: JobContext, input: Input, index: number): Promise<number | null> {
  return (await statedAudioTail(ctx, input, index))?.end ?? null;
}

/** Where an MP4 source's tables end an audio stream inside its last packet (statedAudioTail). */
export interface StatedTail {
  /** Seconds on ffmpeg's timeline of the input (from its format start). */
  end: number;
  /** The last packet's presentation time and the duration its tables give it, seconds (stream timeline). */
  lastPts: number;
  lasts: number;
}

/** statedAudioEnd, with the last packet it ends inside. */
export async function statedAudioTail(
  ctx: JobContext,
  input: Input,
  index: number,
): Promise<StatedTail | null> {
  const { duration, startTime } = input.info;
  // Only an MP4/MOV declares padding this way: other sources are not read at their tail for it.
  if (duration === null || input.sniffed.demuxer !== "mov") return null;
  // A file that cannot seek (a WebM without cues) fails the listing: it states no MP4 end then.
  const probe = await runFfprobe(
    ctx.config.binaries.ffprobe,
    [
      ...["-select_streams", String(index)],
      ...["-read_intervals", `${Math.max(0, startTime + duration - END_LOOKBACK).toFixed(6)}%`],
      ...["-show_entries", "packet=pts_time,duration_time:stream=start_time,duration:format=format_name"],
      ...input.args(),
    ],
    ctx.signal,
  ).catch((err: unknown) => {
    if (ctx.signal.aborted) throw err;
    return null;
  });
  if (probe === null) return null;
  if (!/mov|mp4/.test(probe.format?.format_name ?? "")) return null;
  const num = (v: string | undefined) => (v === undefined || v === "N/A" ? Number.NaN : Number(v));
  const stream = probe.streams?.[0];
  const end = num(stream?.start_time) + num(stream?.duration);
  const packets = (probe.packets ?? []) as EndPacket[];
  const last = packets.reduce<EndPacket | null>(
    (a, b) => (a === null || num(b.pts_time) > num(a.pts_time) ? b : a),
    null,
  );
  const lastPts = num(last?.pts_time);
  // The last packet's duration is the trimmed one; a frame lasts as long as the longest packet.
  const frame = Math.max(0, ...packets.map((p) => num(p.duration_time)).filter(Number.isFinite));
  if (!Number.isFinite(end) || !Number.isFinite(lastPts) || end <= lastPts || end >= lastPts + frame - 1e-6) {
    return null;
  }
  return { end: end - startTime, lastPts, lasts: end - lastPts };
}

/**
 * For a copy of audio stream `index` of a fragmented MP4 (its samples in moof boxes), where its tables end
 * it inside its last packet: ffmpeg 5.1 gives that packet the duration of the one before, not the one its
 * trun states (h264-aac-frag.mp4 of the media matrix: 1,024 samples for 640), and a copy into MP4 declared
 * the last AAC frame's padding as audio. Null for every other source (read in a few box headers, no
 * process: an unfragmented MP4's copy keeps its edit list's end as it is).
 */
export async function fragmentedTail(
  ctx: JobContext,
  input: Input,
  index: number,
): Promise<StatedTail | null> {
  if (input.sniffed.demuxer !== "mov") return null;
  if (!(await hasFragments((offset, length) => input.source.read(offset, length)))) return null;
  return statedAudioTail(ctx, input, index);
}

/**
 * A setts expression (its `duration`) that gives the last packet the duration `tail` states; packets are
 * matched by time (PTS×TB), which holds in the copy's time base whatever it is.
 */
export const lastPacketLasts = (tail: StatedTail): string =>
  `duration='if(gte(PTS*TB\\,${sec(tail.lastPts - 1e-4)})\\,round(${sec(tail.lasts)}/TB)\\,DURATION)'`;
