/** video.probe: codec, duration, frame rate, alpha and size of the first video stream (interface.md). */
import { type ProbeResult, unsupported } from "../protocol.ts";
import type { PreparedJob } from "./job.ts";
import { readParams } from "./params.ts";

export function videoProbe(raw: unknown): PreparedJob {
  readParams(raw, []);
  return {
    probeArgs: [],
    async run(_ctx, input) {
      const video = input.info.video;
      if (video === null) throw unsupported("the source has no video stream");
      const body: ProbeResult = {
        codec: video.codec,
        durationSec: Math.round((input.info.duration ?? 0) * 1e6) / 1e6,
        fps: video.fps,
        hasAlpha: video.hasAlpha,
        width: video.width,
        height: video.height,
      };
      return { kind: "json", body };
    },
  };
}
