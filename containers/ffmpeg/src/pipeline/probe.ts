/** video.probe: codec, duration, frame rate, alpha and size of the first video stream (interface.md). */
import { type ProbeResult, unsupported } from "../protocol.ts";
import { packetSpan } from "./ffmpeg.ts";
import type { Input, JobContext, PreparedJob } from "./job.ts";
import { readParams } from "./params.ts";

/**
 * The duration of a source whose container states none (a live Matroska, raw Annex-B H.264): the span of
 * its video packets, listed without decoding.
 */
const packetDuration = (ctx: JobContext, input: Input): Promise<number | null> =>
  packetSpan(ctx.config.binaries.ffmpeg, input.args(), `0:${input.info.video!.index}`, ctx.signal);

export function videoProbe(raw: unknown): PreparedJob {
  readParams(raw, []);
  return {
    probeArgs: [],
    async run(ctx, input) {
      const video = input.info.video;
      if (video === null) throw unsupported("the source has no video stream");
      const stated = input.info.duration;
      const duration = stated !== null && stated > 0 ? stated : await packetDuration(ctx, input);
      if (duration === null) throw unsupported("the source's video stream holds no frames");
      const body: ProbeResult = {
        codec: video.codec,
        durationSec: Math.round(duration * 1e6) / 1e6,
        fps: video.fps,
        hasAlpha: video.hasAlpha,
        width: video.width,
        height: video.height,
      };
      return { kind: "json", body };
    },
  };
}
