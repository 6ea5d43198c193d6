/**
 * Each operation's params (decisions.md §4) as one zod schema, which both deployables use: the Worker
 * validates requests and builds its OpenAPI document from it (src/operations), the engine validates the
 * params of a job with it (containers/ffmpeg/src/pipeline/params.ts). What one side accepts, the other does.
 */
import type { JobType } from "../protocol.ts";
import { VideoExtractAudioParamsSchema } from "./audio.ts";
import { VideoExtractCoverParamsSchema } from "./cover.ts";
import { VideoProbeParamsSchema } from "./probe.ts";
import { AudioTrimParamsSchema, VideoTrimParamsSchema } from "./trim.ts";
import { ImageWatermarkParamsSchema, VideoWatermarkParamsSchema } from "./watermark.ts";
import type { z } from "./zod.ts";

export { AUDIO_FORMATS, type AudioFormat, SAMPLE_RATES, SAMPLE_RATES_OF } from "./audio.ts";
export { HexColor, HttpUrl, Seconds, UploadId } from "./fields.ts";
export { MARK_DEFAULTS, POSITIONS, type Position, TEXT_SCRIPTS } from "./mark.ts";
export type { ImageWatermarkParams } from "./watermark.ts";
export {
  AudioTrimParamsSchema,
  ImageWatermarkParamsSchema,
  VideoExtractAudioParamsSchema,
  VideoExtractCoverParamsSchema,
  VideoProbeParamsSchema,
  VideoTrimParamsSchema,
  VideoWatermarkParamsSchema,
};

/** The params schema of each job type. */
export const JOB_PARAMS = {
  "video.watermark": VideoWatermarkParamsSchema,
  "video.extract-cover": VideoExtractCoverParamsSchema,
  "video.trim": VideoTrimParamsSchema,
  "audio.trim": AudioTrimParamsSchema,
  "video.extract-audio": VideoExtractAudioParamsSchema,
  "video.probe": VideoProbeParamsSchema,
  "image.watermark": ImageWatermarkParamsSchema,
} as const satisfies Record<JobType, z.ZodType>;

/** A job type's params as validated (defaults applied where the schema has them). */
export type JobParams<T extends JobType> = z.output<(typeof JOB_PARAMS)[T]>;
/** A job type's params as a caller writes them. */
export type JobParamsInput<T extends JobType> = z.input<(typeof JOB_PARAMS)[T]>;
