/**
 * What every operation shares: the job context, opening and sniffing the source, the input probe, and
 * the ffmpeg input arguments (bounded probing, forced demuxer, protocol whitelist).
 */
import path from "node:path";
import {
  type ImageHeader,
  mp4Truncation,
  notAnImage,
  readImageHeaderFrom,
  type Sniffed,
  sniff,
  stillImageInMp4,
} from "@p6/contract/sniff";
import type { EngineConfig } from "../config.ts";
import { EngineError, type EngineResult, unsupported, type TextMark as WireTextMark } from "../protocol.ts";
import { type FetchPolicy, openSource } from "../security/fetcher.ts";
import { describeBytes, LIMITS } from "../security/limits.ts";
import { checkImageData } from "../security/png-data.ts";
import { type FfmpegRun, runFfprobe } from "./ffmpeg.ts";
import { inputProbeArgs, mediaInputArgs } from "./input-args.ts";
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

/**
 * A text mark as the Worker drew it (src/images/text.ts, issue 17): the engine draws no text itself, it
 * overlays this bitmap like a logo, so images and video show the same pixels. Job field `text_mark`, read by
 * watermark.ts readTextMark.
 */
export interface TextMark {
  /** The PNG (straight alpha, opacity applied, cropped to the ink); absent when nothing is drawn. */
  png: Buffer | undefined;
  /** The font size in px it was drawn at; scaled to the size the params ask for on this frame if they differ. */
  fontSize: number;
}

/** A job's `text_mark` as the wire carries it (validated by TextMarkSchema), for the operations. */
export function textMarkOf(mark: WireTextMark | undefined): TextMark | undefined {
  if (mark === undefined) return undefined;
  return {
    png: mark.png === undefined ? undefined : Buffer.from(mark.png, "base64"),
    fontSize: mark.font_size,
  };
}

/** Job request fields beyond the params that some operations take (protocol.ts JobRequest). */
export interface JobExtras {
  /** `text_mark`: a text watermark as the Worker drew it. */
  textMark?: TextMark | undefined;
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
  return mediaInput(ctx, source, sniffed);
}

/**
 * An opened source as the job's audio/video input: refused unless it is audio or video (MP4s are checked for
 * truncation), then relayed. A pipeline's steps each make one of the source they read (pipeline/steps.ts).
 */
export async function mediaInput(
  ctx: JobContext,
  source: SourceDownload,
  sniffed: Sniffed | null,
): Promise<OpenedInput> {
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
  return imageInput(ctx, source, sniffed);
}

/** An opened source as an image input (prepareImage); a pipeline's image steps make theirs so. */
export async function imageInput(
  ctx: JobContext,
  source: SourceDownload,
  sniffed: Sniffed | null,
): Promise<ImageInput> {
  if (sniffed === null || sniffed.kind !== "image") {
    throw unsupported(notAnImage(await source.read(0, LIMITS.sniffBytes)));
  }
  const header = await checkedImageHeader(source, sniffed.format, "the image");
  ctx.markFetched();
  const size = await source.complete();
  // A source opened with a larger cap (a pipeline's, shared by its steps) is held to the image limit here.
  if (size > LIMITS.maxImageBytes) {
    throw new EngineError(
      "REQUEST_BODY_TOO_LARGE",
      `the image is larger than the limit of ${describeBytes(LIMITS.maxImageBytes)}`,
    );
  }
  return { source, format: sniffed.format as ImageInput["format"], demuxer: sniffed.demuxer, header };
}

/** The header of a downloading image, refused when unreadable, animated or over the pixel limit. */
export async function checkedImageHeader(
  source: SourceDownload,
  format: string,
  label: string,
): Promise<ImageHeader> {
  const read = await readImageHeaderFrom((o, l) => source.read(o, l), LIMITS.maxImageBytes);
  const header = read?.format === format ? read : null;
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
  await checkImageData(source, format, label);
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
