/**
 * The audio filter chain of an encode (audio.trim, video.extract-audio): timestamps counted from the
 * samples, and AAC in MP4 aligned so that a decoder plays exactly the samples it was given.
 *
 * - A source's timestamps may not describe its samples (1-tick ALAC packets, a fragmented MP4's early first
 *   AAC packet): an encode stamps each sample by its position (`asetpts=N/SR/TB`), so the output's header
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
import { emptyOutput, type Input, type JobContext, preferSourceError } from "./job.ts";

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

/** Stamps samples by their count from the first one: the output's timeline is its samples. */
export const STAMP_BY_SAMPLES = "asetpts=N/SR/TB";

/**
 * Filters that put `silence` samples before the audio, the first sample of the audio still at 0 (the
 * silence at negative times, which the MP4 muxer hides behind the edit list).
 */
export function leadingSilence(silence: number): string[] {
  return silence === 0 ? [] : [`adelay=delays=${silence}S:all=1`, `asetpts=(N-${silence})/SR/TB`];
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
  const list = path.join(ctx.dir, "samples.framecrc");
  await ctx
    .runFfmpeg([...inputArgs, ...outputArgs, "-c:a", "pcm_s16le", "-f", "framecrc", list], {
      signal: ctx.signal,
    })
    .catch((err: unknown) => preferSourceError(input, err));
  let samples = 0;
  for (const line of (await readFile(list, "latin1")).split("\n")) {
    // stream, dts, pts, duration (samples: PCM packets are timed in 1/sample_rate), size, crc
    const m = /^0,\s*-?\d+,\s*-?\d+,\s*(\d+),/.exec(line);
    if (m !== null) samples += Number(m[1]);
  }
  const { source } = input;
  if (
    samples === 0 ||
    source.readerCutShort !== null ||
    source.error !== null ||
    source.rangeError !== null
  ) {
    throw emptyOutput(input, why);
  }
  return samples;
}
