import { OPERATION_TYPES, type OperationType, OPERATIONS as SPECS } from "@p6/contract/operations";
import { audioTrim } from "./audio-trim";
import { imageWatermark } from "./image-watermark";
import { publicResultOf } from "./schemas";
import type { Operation, WorkerOperation } from "./types";
import { videoExtractAudio } from "./video-extract-audio";
import { videoExtractCover } from "./video-extract-cover";
import { videoProbe } from "./video-probe";
import { videoTrim } from "./video-trim";
import { videoWatermark } from "./video-watermark";

/**
 * The Worker's part of every operation of the registry (@p6/contract/operations), by type: an operation the
 * registry has and this map lacks (or the other way round) is a compile error.
 */
const WORKER: { [T in OperationType]: WorkerOperation<T> } = {
  "image.watermark": imageWatermark,
  "video.watermark": videoWatermark,
  "video.extract-cover": videoExtractCover,
  "video.trim": videoTrim,
  "audio.trim": audioTrim,
  "video.extract-audio": videoExtractAudio,
  "video.probe": videoProbe,
};

/** The registry (decisions.md §1): every operation once; sync routes, task types and pipeline steps come from here. */
export const OPERATIONS: readonly Operation[] = OPERATION_TYPES.map((type): Operation => {
  const { result, ...spec } = SPECS[type];
  const worker = WORKER[type] as WorkerOperation<OperationType>;
  return {
    type,
    ...spec,
    engineResult: result,
    result: publicResultOf(type),
    operationId: worker.operationId,
    summary: worker.summary,
    description: worker.description,
    run: (ctx, sourceUrl, params) => worker.run(ctx, sourceUrl, params as never),
  };
});

const byType = new Map(OPERATIONS.map((op) => [op.type, op]));

export function getOperation(type: string): Operation | undefined {
  return byType.get(type as OperationType);
}

export { schemaNameOf } from "./schemas";
export { OPERATION_TYPES };
