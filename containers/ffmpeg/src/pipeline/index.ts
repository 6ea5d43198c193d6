/** The operation registry: one entry per job type, each in its own module. */
import type { JobType } from "../protocol.ts";
import { audioTrim } from "./audio-trim.ts";
import { videoExtractAudio } from "./extract-audio.ts";
import { videoExtractCover } from "./extract-cover.ts";
import { imageWatermark } from "./image-watermark.ts";
import type { OperationFactory } from "./job.ts";
import { videoProbe } from "./probe.ts";
import { videoTrim } from "./trim.ts";
import { videoWatermark } from "./watermark.ts";

export const OPERATIONS: Record<JobType, OperationFactory> = {
  "video.watermark": videoWatermark,
  "video.extract-cover": videoExtractCover,
  "video.trim": videoTrim,
  "audio.trim": audioTrim,
  "video.extract-audio": videoExtractAudio,
  "video.probe": videoProbe,
  "image.watermark": imageWatermark,
};
