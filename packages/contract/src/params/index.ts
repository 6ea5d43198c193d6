/**
 * Each operation's params (decisions.md §4) as one zod schema, which both deployables use: the Worker
 * validates requests and builds its OpenAPI document from it (src/operations), the engine validates the
 * params of a job with it (containers/ffmpeg/src/pipeline/params.ts). What one side accepts, the other does.
 */
import { VideoExtractAudioParamsSchema } from "./audio.ts";
import { VideoExtractCoverParamsSchema } from "./cover.ts";
import { VideoProbeParamsSchema } from "./probe.ts";
import { AudioTrimParamsSchema, VideoTrimParamsSchema } from "./trim.ts";
import { ImageWatermarkParamsSchema, VideoWatermarkParamsSchema } from "./watermark.ts";

/** An operation's params as validated (the registry's OperationParams, under the name the pipeline uses). */
export type { OperationParams as JobParams } from "../operations/index.ts";
export { AUDIO_FORMATS, type AudioFormat, SAMPLE_RATES, SAMPLE_RATES_OF } from "./audio.ts";
export { HexColor, HttpUrl, Seconds, UploadId } from "./fields.ts";
export { MARK_DEFAULTS, POSITIONS, type Position, TEXT_SCRIPTS } from "./mark.ts";
export { exactlyOneOf } from "./one-of.ts";
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
