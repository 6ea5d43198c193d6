import { z } from "@hono/zod-openapi";
import { runOnEngine } from "./engine-runner";
import { fileResultShape } from "./schemas";
import { trimResultShape, trimShape, trimWindow } from "./trim";
import { defineOperation } from "./types";

const params = z.strictObject(trimShape).superRefine(trimWindow).openapi("AudioTrimParams");

export const audioTrim = defineOperation({
  type: "audio.trim",
  operationId: "trimAudio",
  summary: "Trim audio",
  description:
    "Cuts [start, end) out of an audio file (or a video's audio); the stream is copied when the format allows.",
  cost: 1,
  params,
  example: { start: 0, end: 30 },
  result: z.object({ ...fileResultShape, ...trimResultShape }).openapi("AudioTrimResult"),
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "audio.trim", "audio", sourceUrl, p),
});
