/**
 * The operation registry: every media operation once, with what both deployables need to know of it. The
 * Worker's synchronous routes, task types, pipeline checks and OpenAPI document read it (src/operations), and
 * the engine's router does (containers/ffmpeg/src/pipeline/index.ts); each side keeps a map typed over
 * `OperationType`, so an operation added here and missing on either side is a compile error
 * (docs/operations.md "Adding an operation").
 */
import { VideoExtractAudioParamsSchema } from "../params/audio.ts";
import { VideoExtractCoverParamsSchema } from "../params/cover.ts";
import { VideoProbeParamsSchema } from "../params/probe.ts";
import { AudioTrimParamsSchema, VideoTrimParamsSchema } from "../params/trim.ts";
import { ImageWatermarkParamsSchema, VideoWatermarkParamsSchema } from "../params/watermark.ts";
import type { z } from "../params/zod.ts";
import {
  AudioTrimResultSchema,
  type EngineResult,
  ImageWatermarkResultSchema,
  type ProbeResult,
  VideoExtractAudioResultSchema,
  VideoExtractCoverResultSchema,
  VideoProbeResultSchema,
  VideoTrimResultSchema,
  VideoWatermarkResultSchema,
} from "./results.ts";

/** The kinds of media an operation reads. */
export type MediaKind = "image" | "video" | "audio";
/** What an operation produces: a file of one of those kinds, or data (JSON). */
export type OutputKind = MediaKind | "json";

export interface OperationSpec<P extends z.ZodType = z.ZodType, R extends z.ZodObject = z.ZodObject> {
  /** The kinds of source it reads (sniffed from the bytes when it runs; a pipeline step's from its `use`). */
  takes: readonly MediaKind[];
  /** What it gives: a file of this kind, or json (no file, the result is the data). */
  gives: OutputKind;
  /** Its params (decisions.md §4): validated by the Worker and by the engine with this one schema. */
  params: P;
  /** Its result fields as the engine reports them and the public result carries them (decisions.md §5). */
  result: R;
  /** A true example of each, for the OpenAPI document. */
  example: { params: z.input<P>; result: z.output<R> };
  /** Credits charged on success (decisions.md §7). */
  cost: number;
  /**
   * Where it runs. Every operation is an engine job of the same name (`POST /v1/jobs/<type>`); `worker-first`:
   * the Worker runs it itself for small inputs (image.watermark up to 2.2 megapixels, decisions.md
   * "Synchronous operations") and hands larger ones, and every pipeline step, to that job.
   */
  runs: "engine" | "worker-first";
}

/** Typed by its own schemas, so each `example` is checked against them. */
const operation = <P extends z.ZodType, R extends z.ZodObject, G extends OutputKind>(
  spec: OperationSpec<P, R> & { gives: G },
) => spec;

export const OPERATIONS = {
  "image.watermark": operation({
    takes: ["image"],
    gives: "image",
    params: ImageWatermarkParamsSchema,
    result: ImageWatermarkResultSchema,
    example: {
      params: {
        watermark_url: "https://example.com/logo.png",
        position: "bottom-right",
        scale: 0.2,
        format: "webp",
      },
      result: { format: "webp", size_bytes: 184_320, width: 1920, height: 1080 },
    },
    cost: 1,
    runs: "worker-first",
  }),
  "video.watermark": operation({
    takes: ["video"],
    gives: "video",
    params: VideoWatermarkParamsSchema,
    result: VideoWatermarkResultSchema,
    example: {
      params: { text: "© Acme", position: "bottom-right", opacity: 0.6 },
      result: { format: "mp4", size_bytes: 8_734_112, width: 1280, height: 720, duration: 12.5 },
    },
    cost: 5,
    runs: "engine",
  }),
  "video.extract-cover": operation({
    takes: ["video"],
    gives: "image",
    params: VideoExtractCoverParamsSchema,
    result: VideoExtractCoverResultSchema,
    example: {
      params: { time: 2.5, format: "webp", width: 640 },
      result: { format: "webp", size_bytes: 31_744, width: 640, height: 360 },
    },
    cost: 1,
    runs: "engine",
  }),
  "video.trim": operation({
    takes: ["video"],
    gives: "video",
    params: VideoTrimParamsSchema,
    result: VideoTrimResultSchema,
    example: {
      params: { start: 5, duration: 10, mode: "accurate" },
      result: {
        format: "mp4",
        size_bytes: 5_242_880,
        width: 1280,
        height: 720,
        duration: 10,
        start: 5,
        end: 15,
        copied: false,
      },
    },
    cost: 2,
    runs: "engine",
  }),
  "audio.trim": operation({
    takes: ["audio", "video"],
    gives: "audio",
    params: AudioTrimParamsSchema,
    result: AudioTrimResultSchema,
    example: {
      params: { start: 0, end: 30 },
      result: { format: "mp3", size_bytes: 480_470, duration: 30, start: 0, end: 30, copied: false },
    },
    cost: 1,
    runs: "engine",
  }),
  "video.extract-audio": operation({
    takes: ["video", "audio"],
    gives: "audio",
    params: VideoExtractAudioParamsSchema,
    result: VideoExtractAudioResultSchema,
    example: {
      params: { format: "mp3", bitrate: "192k" },
      result: { format: "mp3", size_bytes: 300_512, duration: 12.5 },
    },
    cost: 2,
    runs: "engine",
  }),
  "video.probe": operation({
    takes: ["video"],
    gives: "json",
    params: VideoProbeParamsSchema,
    result: VideoProbeResultSchema,
    example: {
      params: {},
      result: {
        codec: "h264",
        durationSec: 12.5,
        fps: "30000/1001",
        hasAlpha: false,
        width: 1920,
        height: 1080,
      },
    },
    cost: 1,
    runs: "engine",
  }),
} as const;

export type OperationType = keyof typeof OPERATIONS;
export const OPERATION_TYPES = Object.keys(OPERATIONS) as [OperationType, ...OperationType[]];

export function isOperationType(value: string): value is OperationType {
  return Object.hasOwn(OPERATIONS, value);
}

/** An operation's params as validated (defaults applied where the schema has them). */
export type OperationParams<T extends OperationType> = z.output<(typeof OPERATIONS)[T]["params"]>;
/** An operation's params as a caller writes them. */
export type OperationParamsInput<T extends OperationType> = z.input<(typeof OPERATIONS)[T]["params"]>;
/** An operation's result fields. */
export type OperationResult<T extends OperationType> = z.output<(typeof OPERATIONS)[T]["result"]>;

/** The operations that produce a file. */
export type FileOperationType = {
  [T in OperationType]: (typeof OPERATIONS)[T]["gives"] extends "json" ? never : T;
}[OperationType];

/**
 * Compile-time check: each file operation's result is a narrowing of X-Engine-Result (a field the engine's
 * header cannot carry fails here), and the json operation's is the probe's.
 */
type Narrows<T extends EngineResult> = T;
export type ResultChecks = { [T in FileOperationType]: Narrows<OperationResult<T>> } & {
  "video.probe": ProbeResult;
};

export type { EngineResult, OutputFormat, ProbeResult } from "./results.ts";
export { EngineResultSchema, OUTPUT_FORMATS, VideoProbeResultSchema } from "./results.ts";
