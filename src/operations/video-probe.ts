import { z } from "@hono/zod-openapi";
import { VideoProbeParamsSchema } from "@p6/contract/params";
import { runOnEngine } from "./engine-runner";
import { defineOperation } from "./types";

export const videoProbe = defineOperation({
  type: "video.probe",
  operationId: "probeVideo",
  summary: "Probe a video",
  description:
    "Codec, duration, frame rate (reduced fraction), alpha (pixel format or VP9 alpha_mode) and dimensions of the first video stream. An input without a video stream → 415.",
  cost: 1,
  params: VideoProbeParamsSchema,
  example: {},
  result: z
    .object({
      id: z.string().openapi({ example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB" }),
      type: z.string().openapi({ example: "video.probe" }),
      codec: z.string().openapi({ example: "h264" }),
      durationSec: z.number().openapi({ example: 12.5 }),
      fps: z.string().openapi({ example: "30000/1001" }),
      hasAlpha: z.boolean(),
      width: z.number().int().openapi({ example: 1920 }),
      height: z.number().int().openapi({ example: 1080 }),
    })
    .openapi("VideoProbeResult"),
  run: (ctx, sourceUrl, p) => runOnEngine(ctx, "video.probe", "json", sourceUrl, p),
});
