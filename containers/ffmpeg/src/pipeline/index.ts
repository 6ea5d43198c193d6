/** The operation registry: one entry per job type, each in its own module. */
import type { JobParams } from "@p6/contract/params";
import type { JobType } from "../protocol.ts";
import { audioTrim } from "./audio-trim.ts";
import { videoExtractAudio } from "./extract-audio.ts";
import { videoExtractCover } from "./extract-cover.ts";
import { imageWatermark } from "./image-watermark.ts";
import type { JobExtras, PreparedJob } from "./job.ts";
import { parseParams } from "./params.ts";
import { videoProbe } from "./probe.ts";
import { videoTrim } from "./trim.ts";
import { videoWatermark } from "./watermark.ts";

/** Each job type's operation, given its params as its contract schema validated them. */
type Operations = { [T in JobType]: (params: JobParams<T>, extras: JobExtras) => PreparedJob };

const OPERATIONS: Operations = {
  "video.watermark": videoWatermark,
  "video.extract-cover": videoExtractCover,
  "video.trim": videoTrim,
  "audio.trim": audioTrim,
  "video.extract-audio": videoExtractAudio,
  "video.probe": videoProbe,
  "image.watermark": imageWatermark,
};

/**
 * A job of `type` ready to run: its raw params validated by the type's schema in @p6/contract/params (400
 * naming the field otherwise), then handed to its operation.
 */
export function prepareJob<T extends JobType>(type: T, rawParams: unknown, extras: JobExtras): PreparedJob {
  const operation: Operations[T] = OPERATIONS[type];
  return operation(parseParams(type, rawParams), extras);
}
