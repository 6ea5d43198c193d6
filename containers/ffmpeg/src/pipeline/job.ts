/**
 * What every operation shares: the job context, opening and sniffing the source, the input probe, and
 * the ffmpeg input arguments (bounded probing, forced demuxer, protocol whitelist).
 */
import path from "node:path";
import type { EngineConfig } from "../config.ts";
import { EngineError, type EngineResult, unsupported } from "../protocol.ts";
import { type FetchPolicy, openSource } from "../security/fetcher.ts";
import { LIMITS } from "../security/limits.ts";
import {
  type ImageHeader,
  mp4Truncation,
  notAnImage,
  readImageHeader,
  type Sniffed,
  sniff,
  stillImageInMp4,
} from "../sniff.ts";
import { type FfmpegRun, runFfprobe } from "./ffmpeg.ts";
import { type MediaInfo, mediaInfo } from "./media-info.ts";
import type { Relay } from "./relay.ts";
import { type RangeOpener, SourceDownload } from "./source.ts";
import type { WarmCommands } from "./warm-ffmpeg.ts";
import type { WarmProbes } from "./warm-probe.ts";

export interface JobContext {
  id: string;
  signal: AbortSignal;
  /** Private temp directory of the job; removed when the job ends. */
  dir: string;
  config: EngineConfig;
  relay: Relay;
  policy: FetchPolicy;
  maxSourceBytes: number;
  setProgress(fraction: number): void;
  /** Called once the source is open and sniffed (end of the "fetch" timing phase). */
  markFetched(): void;
  /** Cleanup to run when the job ends (before its file is streamed back). */
  defer(fn: () => void): void;
  /** Work for after the job's response has been sent (starting warm processes for the next job). */
  afterResponse(fn: () => void): void;
  /** Warm ffprobe processes for input probes; absent when the engine keeps none. */
  warmProbes?: WarmProbes;
  /** Warm ffmpeg processes for commands that come again; absent when the engine keeps none. */
  warmCommands?: WarmCommands;
  /** Runs ffmpeg (pipeline/ffmpeg.ts runFfmpeg); speculate.ts may share a run that started early. */
  runFfmpeg(args: readonly string[], opts: FfmpegRun): Promise<string>;
}

export interface Input {
  source: SourceDownload;
  sniffed: Sniffed;
  info: MediaInfo;
  /** ffmpeg/ffprobe input arguments; `before` are input options placed in front of -i (e.g. -ss). */
  args(before?: readonly string[]): string[];
}

export type Output =
  | { kind: "file"; path: string; contentType: string; result: EngineResult }
  | { kind: "json"; body: unknown };

/** An image source (image.watermark): downloaded completely, its header checked before anything decodes it. */
export interface ImageInput {
  source: SourceDownload;
  format: "png" | "jpeg" | "webp";
  demuxer: string;
  header: ImageHeader;
}

/**
 * An operation with validated params, ready to run. Each operation module exports a function that takes its
 * params as the contract's schema validated them (index.ts prepareJob, params.ts) and returns one of these,
 * so a bad request is refused before it takes a slot. Audio/video operations get their
 * probed input (speculate.ts `runMediaJob`), image operations an `ImageInput` (`prepareImage`).
 */
export type PreparedJob = PreparedMediaJob | PreparedImageJob;

export interface PreparedMediaJob {
  kind?: "media";
  /** Extra ffprobe arguments for the input probe. */
  probeArgs: string[];
  /**
   * The run may be started on a quick guess of the input while ffprobe runs (speculate.ts): only for runs
   * that do nothing but read before their first ffmpeg.
   */
  speculate?: boolean;
  /**
   * A short run whose ffmpeg commands may be run by processes started ahead (warm-ffmpeg.ts); a long
   * encode gains nothing from it.
   */
  warm?: boolean;
  run(ctx: JobContext, input: Input): Promise<Output>;
}

export interface PreparedImageJob {
  kind: "image";
  run(ctx: JobContext, input: ImageInput): Promise<Output>;
}

/** Job request fields beyond the params that some operations take (protocol.ts JobRequest). */
export interface JobExtras {
  /** `text_mark`: a text watermark as the Worker drew it (watermark.ts readTextMark). */
  textMark?: import("./watermark.ts").TextMark | undefined;
}

/** Downloads a source into the job directory and returns it once its first bytes are sniffed. */
export async function openInput(
  ctx: Pick<JobContext, "signal" | "dir" | "policy" | "defer">,
  url: string,
  field: string,
  maxBytes: number,
  name: string,
): Promise<{ source: SourceDownload; sniffed: Sniffed | null }> {
  const opened = await openSource(url, field, ctx.policy, maxBytes, ctx.signal);
  // Ranged requests go to the URL that answered (after redirects), checked again like the first.
  const openRange: RangeOpener = (range) =>
    openSource(opened.url.href, field, ctx.policy, maxBytes, ctx.signal, range);
  const source = new SourceDownload(
    opened,
    path.join(ctx.dir, name),
    maxBytes,
    ctx.policy.downloadAheadBytes,
    {
      open: openRange,
      ...(ctx.policy.rangeGapBytes === undefined ? {} : { gapBytes: ctx.policy.rangeGapBytes }),
    },
    ctx.policy.downloadLeadBytes,
  );
  ctx.defer(() => source.destroy());
  const head = await source.read(0, LIMITS.sniffBytes);
  return { source, sniffed: sniff(head) };
}

/** An opened and sniffed audio/video source, not yet probed. */
export type OpenedInput = Omit<Input, "info"> & {
  /** The spellings of this source in ffmpeg arguments (relay URL, file path). */
  refs: readonly string[];
  /** The spelling to use now: the file once the download is complete, else the relay URL. */
  ref(): string;
};

/** Opens and sniffs the job's audio/video source (MP4s are checked for truncation) and relays it. */
export async function openMediaInput(ctx: JobContext, sourceUrl: string): Promise<OpenedInput> {
  const { source, sniffed } = await openInput(ctx, sourceUrl, "source_url", ctx.maxSourceBytes, "source");
  if (sniffed === null) throw unsupported("the source is not a supported audio or video format");
  if (sniffed.kind === "image") {
    throw unsupported(`the source is an image (${sniffed.format}), not audio or video`);
  }
  const still = sniffed.demuxer === "mov" ? stillImageInMp4(await source.read(0, LIMITS.sniffBytes)) : null;
  if (still !== null) throw unsupported(`the source is ${still}, not audio or video`);
  if (sniffed.demuxer === "mov" && (source.declaredBytes !== null || source.done)) {
    const total = await source.totalBytes();
    const cut = await mp4Truncation((o, l) => source.read(o, l), total, 16 * 1024 * 1024);
    if (cut !== null) throw unsupported(`the source media is truncated (${cut})`);
  }
  ctx.markFetched();
  const relayed = ctx.relay.register(source);
  ctx.defer(relayed.release);
  // A complete download is read from disk; a partial one through the relay, which waits for bytes.
  const ref = () => (source.done && source.error === null ? `file:${source.path}` : relayed.url);
  const args = (before: readonly string[] = []) => mediaInputArgs(sniffed.demuxer, ref(), before);
  return { source, sniffed, args, ref, refs: [relayed.url, `file:${source.path}`] };
}

/**
 * ffmpeg/ffprobe input arguments of a sniffed audio/video source read from `ref` (a relay URL or
 * file:<path>): bounded probing, the sniffed demuxer forced, and only the protocol `ref` needs.
 */
export function mediaInputArgs(demuxer: string, ref: string, before: readonly string[] = []): string[] {
  return [
    ...["-probesize", String(LIMITS.probeSizeBytes), "-analyzeduration", String(LIMITS.analyzeDurationUs)],
    // Video decoders refuse frames beyond the cap, even when the resolution grows after the probe looked
    // (`:V`: not cover art, which an audio file may carry at any size).
    ...["-max_pixels:V", String(LIMITS.maxVideoPixels), "-f", demuxer, ...before],
    ...inputProtocolArgs(ref),
    ...["-i", ref],
  ];
}

/**
 * How ffmpeg may read `ref`: only the file, or HTTP to the relay. The relay answers a read in bounded parts
 * (relay.ts), so that it sends no more than the reader takes: `-reconnect` asks for the next part at the
 * end of each, and `-reconnect_delay_max 0` gives up at once when the relay refuses (a failed download)
 * instead of retrying for minutes.
 */
export const inputProtocolArgs = (ref: string): string[] =>
  ref.startsWith("file:")
    ? ["-protocol_whitelist", "file"]
    : ["-reconnect", "1", "-reconnect_delay_max", "0", "-protocol_whitelist", "http,tcp"];

/** Placeholders of a command's source and of its protocol options (NUL cannot occur in an argument). */
export const SOURCE_ARG = "\u0000source";
export const PROTOCOL_ARG = "\u0000protocol";

/**
 * `args` with the job's source (any of `refs`: its relay URL or its file) replaced by a placeholder, and
 * the protocol options that mediaInputArgs puts before its `-i` by one other: the same command whichever
 * way it reads the source. Fill PROTOCOL_ARG with `inputProtocolArgs` of the new source.
 */
export function withSourcePlaceholders(args: readonly string[], refs: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of args) {
    if (refs.includes(a)) {
      const group = inputProtocolArgs(a);
      const start = out.length - 1 - group.length;
      if (out.at(-1) === "-i" && start >= 0 && group.every((g, k) => out[start + k] === g)) {
        out.splice(start, group.length, PROTOCOL_ARG);
      }
      out.push(SOURCE_ARG);
    } else out.push(a);
  }
  return out;
}

/** `template` (from withSourcePlaceholders) reading `ref`: its placeholders, and any of `more`, filled. */
export function fillSourcePlaceholders(
  template: readonly string[],
  ref: string,
  more: ReadonlyMap<string, string> = new Map(),
): string[] {
  return template.flatMap((a) =>
    a === PROTOCOL_ARG ? inputProtocolArgs(ref) : a === SOURCE_ARG ? [ref] : [more.get(a) ?? a],
  );
}

/** The arguments of the input probe of a source read from `ref`, after ffprobe's own leading ones. */
export function inputProbeArgs(demuxer: string, extra: readonly string[], ref: string): string[] {
  return ["-show_format", "-show_streams", ...extra, ...mediaInputArgs(demuxer, ref)];
}

/**
 * The input probe (ffprobe): what the operations need to know about the source. A warm ffprobe answers
 * when one waits for this kind of source (warm-probe.ts); the engine then starts the next after the response.
 */
export async function probeInput(
  ctx: JobContext,
  input: OpenedInput,
  extraProbeArgs: readonly string[],
): Promise<MediaInfo> {
  const { source, sniffed } = input;
  const warm = extraProbeArgs.length === 0 ? ctx.warmProbes : undefined;
  if (warm !== undefined) ctx.afterResponse(() => warm.refill(sniffed.demuxer));
  const probe = await (
    warm?.take(sniffed.demuxer, source, ctx.signal) ??
    runFfprobe(
      ctx.config.binaries.ffprobe,
      inputProbeArgs(sniffed.demuxer, extraProbeArgs, input.ref()),
      ctx.signal,
    )
  ).catch((err: unknown) => {
    // A failed download explains a failed probe better than ffprobe does.
    throw source.error ?? source.rangeError ?? err;
  });
  const info = mediaInfo(probe);
  if (info.video === null && info.audio === null) {
    throw unsupported("the source has no audio or video stream");
  }
  return info;
}

/**
 * Opens an image source (PNG, JPEG or WebP, sniffed) and checks its header against the image limits
 * (decisions.md §9: 25 MiB, 16.8 megapixels) before anything decodes it; then waits for the whole file.
 */
export async function prepareImage(ctx: JobContext, sourceUrl: string): Promise<ImageInput> {
  const maxBytes = Math.min(ctx.maxSourceBytes, LIMITS.maxImageBytes);
  const { source, sniffed } = await openInput(ctx, sourceUrl, "source_url", maxBytes, "source");
  if (sniffed === null || sniffed.kind !== "image") {
    throw unsupported(notAnImage(await source.read(0, LIMITS.sniffBytes)));
  }
  const header = await checkedImageHeader(source, sniffed.format, "the image");
  ctx.markFetched();
  await source.complete();
  return { source, format: sniffed.format as ImageInput["format"], demuxer: sniffed.demuxer, header };
}

/** The header of a downloading image, refused when unreadable, animated or over the pixel limit. */
export async function checkedImageHeader(
  source: SourceDownload,
  format: string,
  label: string,
): Promise<ImageHeader> {
  const header = await readImageHeader((o, l) => source.read(o, l), format);
  if (header === null || header.width === 0 || header.height === 0) {
    throw unsupported(`${label} is truncated or its header cannot be read`);
  }
  if (header.animated) {
    const kind = format === "png" ? "PNG (APNG)" : "WebP";
    throw unsupported(`${label} is an animated ${kind}; animation is not supported, only still images`);
  }
  const pixels = header.width * header.height;
  if (pixels > LIMITS.maxImagePixels) {
    throw new EngineError(
      "REQUEST_BODY_TOO_LARGE",
      `${label} is ${header.width}×${header.height} (${(pixels / 1e6).toFixed(1)} megapixels), over the limit of ${LIMITS.maxImagePixels / 1e6} megapixels`,
    );
  }
  return header;
}

/** ffmpeg input arguments of an image on disk: forced demuxer, file only, decoder capped at the pixel limit. */
export function imageInputArgs(path: string, demuxer: string): string[] {
  return [
    ...["-f", demuxer, "-max_pixels", String(LIMITS.maxImagePixels), "-noautorotate"],
    ...["-protocol_whitelist", "file", "-i", `file:${path}`],
  ];
}

/** Throws the download's error when a run failed because the source did. */
export function preferSourceError(input: Input, err: unknown): never {
  const sourceError = input.source.error ?? input.source.rangeError;
  if (sourceError !== null && !(err instanceof EngineError && err.code === "PROCESSING_TIMEOUT")) {
    throw sourceError;
  }
  throw err;
}

/**
 * The error of a run that produced nothing to present (no audio or video in the window): the source's own
 * failure when a reader was cut short (ffmpeg took it for the end of the file), else a 415 saying why.
 */
export function emptyOutput(input: Input, why: string): EngineError {
  const { source } = input;
  return source.readerCutShort ?? source.error ?? source.rangeError ?? unsupported(why);
}

export const outputPath = (ctx: JobContext, ext: string): string => path.join(ctx.dir, `output.${ext}`);
