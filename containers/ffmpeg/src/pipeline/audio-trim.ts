/**
 * audio.trim: the window [start, end) of the first audio stream, exactly (within a sample for lossless
 * codecs, within the encoder's priming for lossy ones, in players that ignore edit lists too). A stream copy
 * cannot cut inside a packet and keeps what comes before the first one it needs (priming, pre-skip, prior
 * packets behind an edit list, the source's STREAMINFO), so a cut is re-encoded in the same codec
 * (containers.ts audioCutEncoding); only a window that is the whole stream is copied, and AMR, which no
 * encoder here writes, is its frames copied into 3GP, whose edit list plays exactly the window's samples
 * (amr-cut.ts). `copied` says which.
 */
import { stat } from "node:fs/promises";
import type { JobParams } from "@p6/contract/params";
import { invalid, type OutputFormat, unsupported } from "../protocol.ts";
import { amrInto3gp, isAmr } from "./amr-cut.ts";
import {
  aacAlignment,
  audioTiming,
  copyArgs,
  countSamples,
  fragmentedTail,
  frameAligned,
  leadingSilence,
  STAMP_BY_SAMPLES,
  STAMP_FROM_FIRST,
} from "./audio-encode.ts";
import {
  adpcmCutBlock,
  audioCopyContainer,
  audioCutEncoding,
  CONTAINERS,
  type CutEncoding,
  WAV_ADPCM,
} from "./containers.ts";
import { mp3KeepFirstSamples } from "./copy-headers.ts";
import {
  emptyOutput,
  type Input,
  type JobContext,
  outputPath,
  type PreparedJob,
  preferSourceError,
} from "./job.ts";
import { copiedAudioDuration, outputInfo } from "./output-info.ts";
import { roundSec, sec, type Window, windowOf } from "./params.ts";

/**
 * Seconds decoded before the window and dropped: a decoder that starts cold at a seek point outputs a
 * faded or silent first frame (AAC overlap, the MP3 bit reservoir, Opus/Vorbis pre-roll).
 */
const PREROLL = 0.5;

/** The -af filters of encoder arguments, and the arguments without them. */
function splitFilters(codec: readonly string[]): { filters: string[]; rest: string[] } {
  const i = codec.indexOf("-af");
  if (i < 0) return { filters: [], rest: [...codec] };
  return { filters: [codec[i + 1]!], rest: [...codec.slice(0, i), ...codec.slice(i + 2)] };
}

/** The channel and rate options of encoder arguments (what shapes the samples encoded). */
function shapeOf(codec: readonly string[]): string[] {
  return codec.flatMap((a, i) => (a === "-ac" || a === "-ar" ? [a, codec[i + 1]!] : []));
}

async function run(ctx: JobContext, input: Input, p: Window) {
  const { audio, duration } = input.info;
  if (audio === null) throw unsupported("the source has no audio stream");
  if (duration !== null && p.start >= duration) {
    throw invalid("params.start", `start (${p.start} s) is beyond the media's duration (${duration} s)`);
  }
  // Not clamped to the container's duration, which may be the video's (fixture.avi: 0.042 s, its audio
  // 0.092): the cut ends where the audio does.
  const end = p.end;
  const whole = p.start === 0 && duration !== null && p.end >= duration;
  if (isAmr(audio.codec)) {
    // No AMR encoder here: its frames copied, the 3GP edit list playing [start, end) of them.
    const out = (await amrInto3gp(ctx, input, audio, whole ? null : { start: p.start, end })).path;
    return trimmed(ctx, input, out, "3gp", p.start, true);
  }
  const copyInto = whole ? audioCopyContainer(audio.codec, input.sniffed.format) : null;
  const [timing, tail] = await Promise.all([
    audioTiming(ctx, input, audio.index),
    copyInto?.muxer === "mp4" ? fragmentedTail(ctx, input, audio.index) : null,
  ]);
  const encoding: CutEncoding =
    copyInto === null
      ? audioCutEncoding(audio, input.sniffed.format)
      : { container: copyInto, codec: copyArgs(audio, timing, tail) };
  const { container, codec } = encoding;
  const out = outputPath(ctx, container.ext);
  // Timestamps that do not follow the samples cannot be sought by, nor can ADPCM, whose seek is timed by a
  // rounded byte rate (issue-92.wav: 4 ms early at 63 s): the decode starts at the stream's start then.
  const seekable = timing.timesHold && !audio.codec.startsWith("adpcm_");
  const seek = seekable ? Math.max(0, p.start - PREROLL) : 0;
  // `-ss` counts from the format's start time; the window from the timeline's 0, which is the demuxer's 0
  // when the format starts below it (an Opus pre-skip or an AC-3 frame stored before 0 is not presented): the
  // decode's time 0 is then `lead` seconds before the timeline's. An input -ss trims by the frames'
  // timestamps, which a laced or packed stream mostly lacks: the cut is left to the filters (STAMP_FROM_FIRST).
  const lead = Math.max(0, -input.info.startTime);
  const inputArgs = input.args(whole || seek === 0 ? [] : ["-noaccurate_seek", "-ss", sec(seek)]);
  const map = ["-map", `0:${audio.index}`, "-vn", "-sn", "-dn"];
  let encode = codec;
  if (copyInto === null) {
    // The window is cut in the filter chain (what an output -ss/-t would insert), so that the filters that
    // stamp and align the cut's samples come after it.
    const { filters, rest } = splitFilters(codec);
    const from = p.start - seek + lead;
    const window = whole ? [] : [STAMP_FROM_FIRST, `atrim=start=${sec(from)}:duration=${sec(end - p.start)}`];
    const cut = [...window, STAMP_BY_SAMPLES];
    const { frame } = encoding;
    const adpcm = WAV_ADPCM.has(audio.codec);
    if (audio.codec === "aac" || frame !== undefined || adpcm) {
      const samples = await countSamples(
        ctx,
        input,
        inputArgs,
        [...map, "-af", [...cut, ...filters].join(","), ...shapeOf(rest)],
        "the source has no decodable audio between start and end",
      );
      if (adpcm) {
        const channels = Math.min(2, audio.channels);
        const at = rest.indexOf("-block_size");
        if (at >= 0) rest[at + 1] = String(adpcmCutBlock(audio.codec, samples, audio.sampleRate, channels));
      } else if (frame === undefined) filters.push(...leadingSilence(aacAlignment(samples)));
      else {
        const aligned = frameAligned(frame, samples);
        filters.push(...aligned.filters);
        rest.push(...aligned.options);
      }
    }
    encode = ["-af", [...cut, ...filters].join(","), ...rest];
  }
  await ctx
    .runFfmpeg([...inputArgs, ...map, ...encode, ...container.options, "-f", container.muxer, out], {
      signal: ctx.signal,
      durationSec: end - p.start,
      onProgress: ctx.setProgress,
    })
    .catch((err: unknown) => preferSourceError(input, err));
  if (copyInto !== null && container.format === "mp3") await mp3KeepFirstSamples(out);
  return trimmed(ctx, input, out, container.format, p.start, copyInto !== null);
}

/** The answer for the cut in `out`: its length as decoded (a copy) or as its header states (an encode). */
async function trimmed(
  ctx: JobContext,
  input: Input,
  out: string,
  format: OutputFormat,
  start: number,
  copied: boolean,
) {
  const { size } = await stat(out);
  const outDuration =
    (copied
      ? await copiedAudioDuration(out, format, ctx.config.binaries, ctx.signal)
      : (await outputInfo(out, format, ctx.config.binaries.ffprobe, ctx.signal)).duration) ?? 0;
  if (outDuration <= 0) throw emptyOutput(input, "the source has no decodable audio between start and end");
  return {
    kind: "file" as const,
    path: out,
    contentType: CONTAINERS[format].contentType,
    result: {
      format,
      size_bytes: size,
      duration: roundSec(outDuration),
      start: roundSec(start),
      end: roundSec(start + outDuration),
      copied,
    },
  };
}

export function audioTrim(p: JobParams<"audio.trim">): PreparedJob {
  const params = windowOf(p);
  return { probeArgs: [], speculate: true, warm: true, run: (ctx, input) => run(ctx, input, params) };
}
