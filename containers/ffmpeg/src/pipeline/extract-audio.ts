/**
 * video.extract-audio: the first audio stream as MP3 (default), M4A (AAC), WAV, FLAC, Opus, or the
 * original stream copied into a matching container.
 */
import { stat } from "node:fs/promises";
import type { JobParams } from "@p6/contract/params";
import { unsupported } from "../protocol.ts";
import { amrInto3gp, isAmr } from "./amr-cut.ts";
import {
  aacAlignment,
  aacRate,
  audioTiming,
  copyArgs,
  countSamples,
  fragmentedTail,
  leadingSilence,
  STAMP_BY_SAMPLES,
  STAMP_FROM_FIRST,
  statedAudioEnd,
} from "./audio-encode.ts";
import { audioCopyContainer, CONTAINERS, type Container, opusLayoutFilters } from "./containers.ts";
import { mp3KeepFirstSamples, oggOpusEndAt } from "./copy-headers.ts";
import {
  emptyOutput,
  type Input,
  type JobContext,
  outputPath,
  type PreparedJob,
  preferSourceError,
} from "./job.ts";
import { joinAll } from "./join.ts";
import type { AudioInfo } from "./media-info.ts";
import { copiedAudioDuration, outputInfo } from "./output-info.ts";
import { roundSec, sec } from "./params.ts";

const FORMATS = ["mp3", "m4a", "wav", "flac", "opus", "original"] as const;
type AudioFormat = (typeof FORMATS)[number];

const ENCODERS = { mp3: "libmp3lame", m4a: "aac", opus: "libopus", wav: "pcm_s16le", flac: "flac" } as const;

interface AudioParams {
  format: AudioFormat;
  /** bits per second */
  bitrate: number | undefined;
  sampleRate: number | undefined;
  channels: number | undefined;
}

function parse(p: JobParams<"video.extract-audio">): AudioParams {
  return {
    format: p.format ?? "mp3",
    // "128k" (the schema allows 32k–320k, and none with a lossless format or a copy).
    bitrate: p.bitrate === undefined ? undefined : Number.parseInt(p.bitrate, 10) * 1000,
    sampleRate: p.sample_rate,
    channels: p.channels,
  };
}

/**
 * The encode of `audio` into `format`: codec options and the filter chain (audio-encode.ts). M4A is encoded
 * at the rate the AAC encoder takes, resampled in the chain so that the samples counted are the ones encoded.
 */
function encoding(
  audio: AudioInfo,
  p: AudioParams & { format: Exclude<AudioFormat, "original"> },
  statedEnd: number | null,
) {
  const codec = ["-c:a", ENCODERS[p.format]];
  if (p.format === "mp3" || p.format === "m4a" || p.format === "opus") {
    codec.push("-b:a", String(p.bitrate ?? 128000));
  }
  /** Channels and rate of the samples encoded. */
  const shape = p.channels === undefined ? [] : ["-ac", String(p.channels)];
  // An MP4's declared padding after the last sample, which ffmpeg 5.1 decodes, is not the source's audio.
  const filters =
    statedEnd === null
      ? [STAMP_BY_SAMPLES]
      : [STAMP_FROM_FIRST, `atrim=end=${sec(statedEnd)}`, STAMP_BY_SAMPLES];
  if (p.format === "opus") filters.push(...opusLayoutFilters(audio, p.channels));
  const known = audio.sampleRate > 0 ? audio.sampleRate : undefined;
  const rate = p.format === "m4a" && known !== undefined ? (p.sampleRate ?? aacRate(known)) : p.sampleRate;
  if (rate !== undefined) {
    if (rate !== audio.sampleRate) filters.push(`aresample=${rate}`);
    shape.push("-ar", String(rate));
  }
  return { codec, shape, filters };
}

async function run(ctx: JobContext, input: Input, p: AudioParams) {
  const { audio, duration } = input.info;
  if (audio === null) throw unsupported("the source has no audio stream");
  let container: Container;
  let codec: string[];
  const map = ["-map", `0:${audio.index}`, "-vn", "-sn", "-dn"];
  if (p.format === "original") {
    container = audioCopyContainer(audio.codec, input.sniffed.format) ?? CONTAINERS.mka;
    const [timing, tail] = await joinAll([
      audioTiming(ctx, input, audio.index),
      container.muxer === "mp4" ? fragmentedTail(ctx, input, audio.index) : null,
    ]);
    codec = isAmr(audio.codec) ? [] : copyArgs(audio, timing, tail);
  } else {
    container = CONTAINERS[p.format];
    // The stated end is a time: it places the last sample only where the timestamps follow the samples
    // (not after fragmented.mp4's early first packet).
    const [timing, end] = await joinAll([
      audioTiming(ctx, input, audio.index),
      statedAudioEnd(ctx, input, audio.index),
    ]);
    const statedEnd = timing.timesHold ? end : null;
    const encode = encoding(audio, { ...p, format: p.format }, statedEnd);
    const filters = encode.filters;
    if (p.format === "m4a") {
      const samples = await countSamples(
        ctx,
        input,
        input.args(),
        [...map, "-af", filters.join(","), ...encode.shape],
        "the source's audio stream holds no decodable audio",
      );
      filters.push(...leadingSilence(aacAlignment(samples)));
    }
    codec = ["-af", filters.join(","), ...encode.shape, ...encode.codec];
  }
  let out = outputPath(ctx, container.ext);
  if (p.format === "original" && isAmr(audio.codec)) {
    // AMR's timestamps may not follow its frames: copied by its samples, the source's edit list kept.
    out = (await amrInto3gp(ctx, input, audio, null)).path;
  } else {
    await ctx
      .runFfmpeg([...input.args(), ...map, ...codec, ...container.options, "-f", container.muxer, out], {
        signal: ctx.signal,
        durationSec: duration ?? 0,
        onProgress: ctx.setProgress,
      })
      .catch((err: unknown) => preferSourceError(input, err));
  }
  if (p.format === "original" && container.format === "mp3") await mp3KeepFirstSamples(out);
  if (p.format === "original" && container.format === "opus") {
    // The source's samples, as its demuxer trims them (an Opus decoder's output is 48 kHz), up to where an
    // MP4 source's edit list ends them (ffmpeg 5.1 decodes the last packet whole: av1-opus.mp4 of the media
    // matrix was 14 ms long).
    const stated = await statedAudioEnd(ctx, input, audio.index);
    const samples = await countSamples(
      ctx,
      input,
      input.args(),
      stated === null ? map : [...map, "-af", `${STAMP_FROM_FIRST},atrim=end=${sec(stated)}`],
      "the source's audio stream holds no decodable audio",
    );
    await oggOpusEndAt(out, samples);
  }
  const { size } = await stat(out);
  const measured =
    p.format === "original"
      ? await copiedAudioDuration(out, container.format, ctx.config.binaries, ctx.signal)
      : (await outputInfo(out, container.format, ctx.config.binaries.ffprobe, ctx.signal)).duration;
  if (measured === null || measured === undefined || measured <= 0) {
    // A copy of audio that does not decode, or an encode of a stream that holds no samples.
    throw emptyOutput(input, "the source's audio stream holds no decodable audio");
  }
  return {
    kind: "file" as const,
    path: out,
    contentType: container.contentType,
    result: {
      format: container.format,
      size_bytes: size,
      duration: roundSec(measured),
    },
  };
}

export function videoExtractAudio(p: JobParams<"video.extract-audio">): PreparedJob {
  const params = parse(p);
  return { probeArgs: [], speculate: true, warm: true, run: (ctx, input) => run(ctx, input, params) };
}
