/**
 * video.extract-audio: the first audio stream as MP3 (default), M4A (AAC), WAV, FLAC, Opus, or the
 * original stream copied into a matching container.
 */
import { stat } from "node:fs/promises";
import { invalid, unsupported } from "../protocol.ts";
import { aacAlignment, aacRate, countSamples, leadingSilence, STAMP_BY_SAMPLES } from "./audio-encode.ts";
import { audioCopyContainer, CONTAINERS, type Container, opusLayoutFilters } from "./containers.ts";
import {
  emptyOutput,
  type Input,
  type JobContext,
  outputPath,
  type PreparedJob,
  preferSourceError,
} from "./job.ts";
import type { AudioInfo } from "./media-info.ts";
import { copiedAudioDuration, outputInfo } from "./output-info.ts";
import { forbid, optEnum, optNumber, type RawParams, readParams, roundSec } from "./params.ts";

const FORMATS = ["mp3", "m4a", "wav", "flac", "opus", "original"] as const;
type AudioFormat = (typeof FORMATS)[number];

const RATES: Record<Exclude<AudioFormat, "original">, readonly number[]> = {
  mp3: [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000],
  m4a: [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000],
  opus: [8000, 12000, 16000, 24000, 48000],
  wav: [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 88200, 96000, 176400, 192000],
  flac: [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 88200, 96000, 176400, 192000],
};

const ENCODERS = { mp3: "libmp3lame", m4a: "aac", opus: "libopus", wav: "pcm_s16le", flac: "flac" } as const;

interface AudioParams {
  format: AudioFormat;
  /** bits per second */
  bitrate: number | undefined;
  sampleRate: number | undefined;
  channels: number | undefined;
}

/** `bitrate`: "128k" (32k–320k) or a number of bits per second (32000–320000). */
function readBitrate(p: RawParams): number | undefined {
  const value = p.bitrate;
  if (value === undefined || value === null) return undefined;
  const bps =
    typeof value === "string" && /^\d{2,3}k$/.test(value)
      ? Number(value.slice(0, -1)) * 1000
      : typeof value === "number" && Number.isInteger(value)
        ? value
        : Number.NaN;
  if (!(bps >= 32000 && bps <= 320000)) {
    throw invalid("params.bitrate", 'bitrate must be between 32k and 320k (e.g. "128k")');
  }
  return bps;
}

function parse(raw: unknown): AudioParams {
  const p = readParams(raw, ["format", "bitrate", "sample_rate", "channels"]);
  const format = optEnum(p, "format", FORMATS) ?? "mp3";
  if (format === "original") {
    for (const key of ["bitrate", "sample_rate", "channels"])
      forbid(p, key, "does not apply to format original (stream copy)");
  }
  if (format === "wav" || format === "flac") forbid(p, "bitrate", `does not apply to lossless ${format}`);
  const sampleRate = optNumber(p, "sample_rate", { integer: true });
  if (sampleRate !== undefined && format !== "original" && !RATES[format].includes(sampleRate)) {
    throw invalid(
      "params.sample_rate",
      `sample_rate for ${format} must be one of: ${RATES[format].join(", ")}`,
    );
  }
  const channels = optNumber(p, "channels", { integer: true });
  if (channels !== undefined && channels !== 1 && channels !== 2) {
    throw invalid("params.channels", "channels must be 1 or 2");
  }
  return { format, bitrate: readBitrate(p), sampleRate, channels };
}

/**
 * The encode of `audio` into `format`: codec options and the filter chain (audio-encode.ts). M4A is encoded
 * at the rate the AAC encoder takes, resampled in the chain so that the samples counted are the ones encoded.
 */
function encoding(audio: AudioInfo, p: AudioParams & { format: Exclude<AudioFormat, "original"> }) {
  const codec = ["-c:a", ENCODERS[p.format]];
  if (p.format === "mp3" || p.format === "m4a" || p.format === "opus") {
    codec.push("-b:a", String(p.bitrate ?? 128000));
  }
  /** Channels and rate of the samples encoded. */
  const shape = p.channels === undefined ? [] : ["-ac", String(p.channels)];
  const filters = [STAMP_BY_SAMPLES];
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
    container = audioCopyContainer(audio.codec) ?? CONTAINERS.mka;
    codec = ["-c:a", "copy"];
  } else {
    container = CONTAINERS[p.format];
    const encode = encoding(audio, { ...p, format: p.format });
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
  const out = outputPath(ctx, container.ext);
  await ctx
    .runFfmpeg([...input.args(), ...map, ...codec, ...container.options, "-f", container.muxer, out], {
      signal: ctx.signal,
      durationSec: duration ?? 0,
      onProgress: ctx.setProgress,
    })
    .catch((err: unknown) => preferSourceError(input, err));
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

export function videoExtractAudio(raw: unknown): PreparedJob {
  const params = parse(raw);
  return { probeArgs: [], speculate: true, warm: true, run: (ctx, input) => run(ctx, input, params) };
}
