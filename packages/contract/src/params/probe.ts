import { z } from "./zod.ts";

/** video.probe takes no params. */
export const VideoProbeParamsSchema = z.strictObject({}).openapi("VideoProbeParams");
