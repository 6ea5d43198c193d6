/** video.probe: codec, duration, frame rate, alpha and size of the first video stream (interface.md). */
import { type ProbeResult, unsupported } from "../protocol.ts";
import { packetSpan, packetsEnd } from "./ffmpeg.ts";
import type { Input, JobContext, PreparedJob } from "./job.ts";
import { readParams } from "./params.ts";

/**
 * The duration of a source whose container states none (a live Matroska, raw Annex-B H.264): the span of
 * its video packets, listed without decoding.
 */
const packetDuration = (ctx: JobContext, input: Input): Promise<number | null> =>
  packetSpan(ctx.config.binaries.ffmpeg, input.args(), `0:${input.info.video!.index}`, ctx.signal);

/**
 * Seconds from the source's start (ffprobe's start_time: after the edit list) to the end of its last
 * video or audio packet, read at the end of the file: what a player can play, whatever the header says
 * (a Matroska file cut short still states its whole length).
 */
async function playable(ctx: JobContext, input: Input): Promise<number | null> {
  const { video, audio, startTime, duration } = input.info;
  // An MP4's index times every sample and sniffing refuses one cut short (sniff.ts), so its header is not
  // checked against the file's tail (which a probe would otherwise wait for); its stated duration counts
  // an empty edit before the first sample (a timeline that starts at 300 s states 310 s).
  if (input.sniffed.demuxer === "mov") return duration === null ? null : duration - Math.max(0, startTime);
  const maps = [video, audio].flatMap((s) => (s === null ? [] : [`0:${s.index}`]));
  const end = await packetsEnd(ctx.config.binaries.ffmpeg, (before) => input.args(before), maps, ctx.signal);
  return end === null || end <= startTime ? null : end - startTime;
}

/**
 * The header's duration unless the packets say otherwise by more than a rounding: a header may state the
 * length it was meant to have (fixture2.mkv, cut short: 1132 s for 1.7 s), count a subtitle that outlasts
 * the audio and video (3.4 s for 2.0 s), or give the end of a timeline that starts late (310 s for 10 s
 * from 300 s). Within the tolerance the header wins: an edit list may end inside the last packet.
 */
export function presentedDuration(stated: number | null, measured: number | null): number | null {
  if (measured === null) return stated;
  if (stated === null) return measured;
  return Math.abs(stated - measured) > Math.max(0.25, 0.02 * measured) ? measured : stated;
}

export function videoProbe(raw: unknown): PreparedJob {
  readParams(raw, []);
  return {
    probeArgs: [],
    async run(ctx, input) {
      const video = input.info.video;
      if (video === null) throw unsupported("the source has no video stream");
      const stated = input.info.duration;
      const duration =
        presentedDuration(stated, await playable(ctx, input)) ?? (await packetDuration(ctx, input));
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
