/**
 * audio.trim: a window of the first audio stream. The stream is copied when its codec has a container
 * of its own (MP3, AAC, PCM, FLAC, Opus, Vorbis, …), otherwise re-encoded to MP3.
 */
import { stat } from "node:fs/promises";
import { invalid, unsupported } from "../protocol.ts";
import { audioCopyContainer, CONTAINERS } from "./containers.ts";
import { type Input, type JobContext, outputPath, type PreparedJob, preferSourceError } from "./job.ts";
import { outputInfo } from "./output-info.ts";
import { readParams, readWindow, roundSec, sec, type Window } from "./params.ts";

async function run(ctx: JobContext, input: Input, p: Window) {
  const { audio, duration } = input.info;
  if (audio === null) throw unsupported("the source has no audio stream");
  if (duration !== null && p.start >= duration) {
    throw invalid("params.start", `start (${p.start} s) is beyond the media's duration (${duration} s)`);
  }
  const end = duration === null ? p.end : Math.min(p.end, duration);
  const copy = audioCopyContainer(audio.codec);
  const container = copy ?? CONTAINERS.mp3;
  const codec = copy !== null ? ["-c:a", "copy"] : ["-c:a", "libmp3lame", "-b:a", "192k"];
  const out = outputPath(ctx, container.ext);
  await ctx
    .runFfmpeg(
      [
        ...input.args(["-ss", sec(p.start)]),
        ...["-t", sec(end - p.start), "-map", `0:${audio.index}`, "-vn", "-sn", "-dn"],
        ...codec,
        ...container.options,
        ...["-f", container.muxer, out],
      ],
      { signal: ctx.signal, durationSec: end - p.start, onProgress: ctx.setProgress },
    )
    .catch((err: unknown) => preferSourceError(input, err));
  const { size } = await stat(out);
  const info = await outputInfo(out, container.format, ctx.config.binaries.ffprobe, ctx.signal);
  const outDuration = info.duration ?? end - p.start;
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
    },
  };
}

export function audioTrim(raw: unknown): PreparedJob {
  const params = readWindow(readParams(raw, ["start", "end", "duration"]));
  return { probeArgs: [], speculate: true, warm: true, run: (ctx, input) => run(ctx, input, params) };
}
