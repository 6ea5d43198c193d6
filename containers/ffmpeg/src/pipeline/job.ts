/**
 * What every operation shares: the job context, opening and sniffing the source, the input probe, and
 * the ffmpeg input arguments (bounded probing, forced demuxer, protocol whitelist).
 */
import path from "node:path";
import type { EngineConfig } from "../config.ts";
import { EngineError, type EngineResult, unsupported } from "../protocol.ts";
import { type FetchPolicy, openSource } from "../security/fetcher.ts";
import { LIMITS } from "../security/limits.ts";
import { mp4Truncation, type Sniffed, sniff } from "../sniff.ts";
import { runFfprobe } from "./ffmpeg.ts";
import { type MediaInfo, mediaInfo } from "./media-info.ts";
import type { Relay } from "./relay.ts";
import { SourceDownload } from "./source.ts";

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
  /** Cleanup to run when the job ends (after the response). */
  defer(fn: () => void): void;
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

/**
 * An operation with validated params, ready to run. Each operation module exports a function that
 * validates raw params (decisions.md §4, throwing VALIDATION_INVALID_ARGUMENT naming the field) and returns
 * one of these, so a bad request is refused before it takes a slot.
 */
export interface PreparedJob {
  /** Extra ffprobe arguments for the input probe. */
  probeArgs: string[];
  run(ctx: JobContext, input: Input): Promise<Output>;
}

export type OperationFactory = (rawParams: unknown) => PreparedJob;

/** Downloads a source into the job directory and returns it once its first bytes are sniffed. */
export async function openInput(
  ctx: Pick<JobContext, "signal" | "dir" | "policy" | "defer">,
  url: string,
  field: string,
  maxBytes: number,
  name: string,
): Promise<{ source: SourceDownload; sniffed: Sniffed | null }> {
  const opened = await openSource(url, field, ctx.policy, maxBytes, ctx.signal);
  const source = new SourceDownload(
    opened,
    path.join(ctx.dir, name),
    maxBytes,
    ctx.policy.downloadAheadBytes,
  );
  ctx.defer(() => source.destroy());
  const head = await source.read(0, LIMITS.sniffBytes);
  return { source, sniffed: sniff(head) };
}

/** Opens, sniffs and probes the job's audio/video source. */
export async function prepareInput(
  ctx: JobContext,
  sourceUrl: string,
  extraProbeArgs: readonly string[],
): Promise<Input> {
  const { source, sniffed } = await openInput(ctx, sourceUrl, "source_url", ctx.maxSourceBytes, "source");
  if (sniffed === null) throw unsupported("the source is not a supported audio or video format");
  if (sniffed.kind === "image") {
    throw unsupported(`the source is an image (${sniffed.format}), not audio or video`);
  }
  if (sniffed.demuxer === "mov" && (source.declaredBytes !== null || source.done)) {
    const total = await source.totalBytes();
    const cut = await mp4Truncation((o, l) => source.read(o, l), total, 16 * 1024 * 1024);
    if (cut !== null) throw unsupported(`the source media is truncated (${cut})`);
  }
  ctx.markFetched();
  const relayed = ctx.relay.register(source);
  ctx.defer(relayed.release);
  const args = (before: readonly string[] = []): string[] => {
    const common = [
      "-probesize",
      String(LIMITS.probeSizeBytes),
      "-analyzeduration",
      String(LIMITS.analyzeDurationUs),
      "-f",
      sniffed.demuxer,
      ...before,
    ];
    // A complete download is read from disk; a partial one through the relay, which waits for bytes.
    return source.done && source.error === null
      ? [...common, "-protocol_whitelist", "file", "-i", `file:${source.path}`]
      : [...common, "-protocol_whitelist", "http,tcp", "-i", relayed.url];
  };
  const probe = await runFfprobe(
    ctx.config.binaries.ffprobe,
    ["-show_format", "-show_streams", ...extraProbeArgs, ...args()],
    ctx.signal,
  ).catch((err: unknown) => {
    // A failed download explains a failed probe better than ffprobe does.
    throw source.error ?? err;
  });
  const info = mediaInfo(probe);
  if (info.video === null && info.audio === null) {
    throw unsupported("the source has no audio or video stream");
  }
  return { source, sniffed, info, args };
}

/** Throws the download's error when a run failed because the source did. */
export function preferSourceError(input: Input, err: unknown): never {
  if (input.source.error !== null && !(err instanceof EngineError && err.code === "PROCESSING_TIMEOUT")) {
    throw input.source.error;
  }
  throw err;
}

export const outputPath = (ctx: JobContext, ext: string): string => path.join(ctx.dir, `output.${ext}`);
