/**
 * audio.trim: the window [start, end) of the first audio stream, exactly (within a sample for lossless
 * codecs, within the encoder's priming for lossy ones, in players that ignore edit lists too). A stream copy
 * cannot cut inside a packet and keeps what comes before the first one it needs (priming, pre-skip, prior
 * packets behind an edit list, the source's STREAMINFO), so a cut is re-encoded in the same codec
 * (containers.ts audioCutEncoding); only a window that is the whole stream is copied. `copied` says which.
 */
import { stat } from "node:fs/promises";
import { invalid, unsupported } from "../protocol.ts";
import { audioCopyContainer, audioCutEncoding } from "./containers.ts";
import {
  emptyOutput,
  type Input,
  type JobContext,
  outputPath,
  type PreparedJob,
  preferSourceError,
} from "./job.ts";
import { copiedAudioDuration, outputInfo } from "./output-info.ts";
import { readParams, readWindow, roundSec, sec, type Window } from "./params.ts";

/**
 * Seconds decoded before the window and dropped: a decoder that starts cold at a seek point outputs a
 * faded or silent first frame (AAC overlap, the MP3 bit reservoir, Opus/Vorbis pre-roll).
 */
const PREROLL = 0.5;

async function run(ctx: JobContext, input: Input, p: Window) {
  const { audio, duration } = input.info;
  if (audio === null) throw unsupported("the source has no audio stream");
  if (duration !== null && p.start >= duration) {
    throw invalid("params.start", `start (${p.start} s) is beyond the media's duration (${duration} s)`);
  }
  const end = duration === null ? p.end : Math.min(p.end, duration);
  const whole = p.start === 0 && duration !== null && p.end >= duration;
  const copyInto = whole ? audioCopyContainer(audio.codec) : null;
  const { container, codec } =
    copyInto === null ? audioCutEncoding(audio) : { container: copyInto, codec: ["-c:a", "copy"] };
  const out = outputPath(ctx, container.ext);
  const seek = Math.max(0, p.start - PREROLL);
  await ctx
    .runFfmpeg(
      [
        ...input.args(whole || seek === 0 ? [] : ["-ss", sec(seek)]),
        ...(whole ? [] : ["-ss", sec(p.start - seek), "-t", sec(end - p.start)]),
        ...["-map", `0:${audio.index}`, "-vn", "-sn", "-dn"],
        ...codec,
        ...container.options,
        ...["-f", container.muxer, out],
      ],
      { signal: ctx.signal, durationSec: end - p.start, onProgress: ctx.setProgress },
    )
    .catch((err: unknown) => preferSourceError(input, err));
  const { size } = await stat(out);
  const outDuration =
    (copyInto === null
      ? (await outputInfo(out, container.format, ctx.config.binaries.ffprobe, ctx.signal)).duration
      : await copiedAudioDuration(out, container.format, ctx.config.binaries, ctx.signal)) ?? 0;
  if (outDuration <= 0) throw emptyOutput(input, "the source has no decodable audio between start and end");
  return {
    kind: "file" as const,
    path: out,
    contentType: container.contentType,
    result: {
      format: container.format,
      size_bytes: size,
      duration: roundSec(outDuration),
      start: roundSec(p.start),
      end: roundSec(p.start + outDuration),
      copied: copyInto !== null,
    },
  };
}

export function audioTrim(raw: unknown): PreparedJob {
  const params = readWindow(readParams(raw, ["start", "end", "duration"]));
  return { probeArgs: [], speculate: true, warm: true, run: (ctx, input) => run(ctx, input, params) };
}
