import { audioTrim } from "./audio-trim";
import { imageWatermark } from "./image-watermark";
import type { Operation } from "./types";
import { videoExtractAudio } from "./video-extract-audio";
import { videoExtractCover } from "./video-extract-cover";
import { videoProbe } from "./video-probe";
import { videoTrim } from "./video-trim";
import { videoWatermark } from "./video-watermark";

/** The registry (decisions.md §1): every operation once; sync routes and task types come from here. */
export const OPERATIONS: readonly Operation[] = [
  imageWatermark,
  videoWatermark,
  videoExtractCover,
  videoTrim,
  audioTrim,
  videoExtractAudio,
  videoProbe,
] as unknown as readonly Operation[];

const byType = new Map(OPERATIONS.map((op) => [op.type, op]));

export function getOperation(type: string): Operation | undefined {
  return byType.get(type);
}

export const OPERATION_TYPES = OPERATIONS.map((op) => op.type);

/** The type as a component name prefix for the OpenAPI document: video.extract-audio → VideoExtractAudio. */
export const schemaNameOf = (type: string) =>
  type.replace(/(^|[.-])(\w)/g, (_m, _sep: string, c: string) => c.toUpperCase());
