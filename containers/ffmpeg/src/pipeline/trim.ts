/**
 * video.trim. `accurate` (default) re-encodes [start, end) to H.264/AAC MP4, frame-exact. `fast` copies the
 * video from the keyframe at or before `start` (reported as `start`), with its audio cut to the same interval
 * (trim-fast.ts); where no copy can present exactly that, it re-encodes as `accurate` does. `copied` says
 * which was done.
 */
import { stat } from "node:fs/promises";
import type { JobParams } from "@p6/contract/params";
import { invalid, unsupported } from "../protocol.ts";
import { amrAudioInput } from "./amr-cut.ts";
import { exactAacArgs, STAMP_FROM_FIRST } from "./audio-encode.ts";
import { CONTAINERS } from "./containers.ts";
import {
  emptyOutput,
  type Input,
  type JobContext,
  outputPath,
  type PreparedJob,
  preferSourceError,
} from "./job.ts";
import { joinAll } from "./join.ts";
import { playerLead } from "./media-info.ts";
import { outputInfo } from "./output-info.ts";
import { roundSec, sec, type Window, windowOf } from "./params.ts";
import { KEEP_FRAME_TIMES, lastFrameLasts, squarePixels } from "./reencode.ts";
import { frameShownAt, videoEnd } from "./source-timing.ts";
import { type Cut, copyCut, keyframeProbeArgs, trimMuxOptions } from "./trim-fast.ts";

/** Seconds before the shown frame's time that an accurate cut's input is read from (encodeCut). */
const SEEK_BEFORE_SHOWN = 1e-6;

interface TrimParams extends Window {
  mode: "accurate" | "fast";
}

async function run(ctx: JobContext, input: Input, p: TrimParams) {
  const { video } = input.info;
  // The media's length on a player's timeline (from 0, not from a timestamp below it).
  const duration = input.info.duration === null ? null : input.info.duration - playerLead(input.info);
  if (video === null) throw unsupported("the source has no video stream");
  if (duration !== null && p.start >= duration) {
    throw invalid("params.start", `start (${p.start} s) is beyond the media's duration (${duration} s)`);
  }
  const end = duration === null ? p.end : Math.min(p.end, duration);
  // A fast cut that cannot be copied exactly is re-encoded (`copied: false`), never sent inexact.
  const copied = p.mode === "fast" ? await copyCut(ctx, input, p.start, end) : null;
  const cut = copied ?? (await encodeCut(ctx, input, p.start, end));
  const { size } = await stat(cut.path);
  const info = await outputInfo(cut.path, cut.container.format, ctx.config.binaries.ffprobe, ctx.signal);
  const outDuration = info.duration ?? 0;
  if (info.width === undefined || outDuration <= 0) {
    // Nothing to present: the window holds no frame (shorter than a frame, or past where the media really ends).
    throw emptyOutput(input, "the source has no decodable video frame between start and end");
  }
  return {
    kind: "file" as const,
    path: cut.path,
    contentType: cut.container.contentType,
    result: {
      format: cut.container.format,
      size_bytes: size,
      width: info.width,
      height: info.height ?? video.height,
      duration: roundSec(outDuration),
      start: roundSec(cut.start),
      end: roundSec(cut.start + outDuration),
      copied: copied !== null,
    },
  };
}

/**
 * The accurate cut: [start, end) re-encoded to H.264/AAC MP4, as a player presents it. Its first frame is
 * the one shown at `start` (the last presented at or before it), placed at 0; each later frame at its source
 * time − start; the last one shown until the next source frame or `end` (source-timing.ts). ffmpeg's own
 * `-ss start` drops every frame before `start`, so a window starting between two frames began with the
 * next one (20–40 ms late, and none at all inside one long frame): the input is read from just before the
 * shown frame, and the frames moved back by the rest. `at` and `until` are a player's times (playerLead).
 */
async function encodeCut(ctx: JobContext, input: Input, at: number, until: number): Promise<Cut> {
  // From a player's time to ffmpeg's: ffmpeg counts from the earliest timestamp, a player from 0 where
  // that is below 0 (an Opus pre-skip in WebM: the video's 0.007 s frame is ffmpeg's 0.014).
  const lead = playerLead(input.info);
  const [start, end] = [at + lead, until + lead];
  const video = input.info.video!;
  const { audio } = input.info;
  const container = CONTAINERS.mp4;
  const out = outputPath(ctx, container.ext);
  const [shown, last] = await joinAll([
    frameShownAt(ctx, input, start).catch(() => null),
    videoEnd(ctx, input, end).catch(() => null),
  ]);
  // Where the output starts: just before the shown frame. ffmpeg rounds the seek into the stream's
  // time base; where frames are one tick apart (1/fps: MJPEG in MOV, Theora, AVI) halfway between two was a
  // tie rounded onto the shown frame, which the move back by `early` then put on the next one's time (the
  // shown frame dropped as a duplicate). A microsecond before it rounds onto the shown frame exactly.
  const from = shown === null ? start : Math.max(0, shown.time - SEEK_BEFORE_SHOWN);
  const early = start - from;
  // Where the input is read from: `from`, where a seek there decodes the shown frame; else the keyframe it
  // is decoded from (source-timing.ts seekPoint: MPEG-TS, whose seek lands after that keyframe, and an open
  // GOP's leading pictures), the frames between there and `from` then dropped here, not by ffmpeg's seek.
  const seek = shown?.seek === null || shown?.seek === undefined ? from : Math.min(from, shown.seek);
  const skip = from - seek;
  // The video's input ends between the last frame before `end` and the first at or after it: a frame at
  // `end` itself would otherwise stay or go with the rounding of the seek into its time base.
  const cutAt = last === null || last.next === null ? end : Math.min(end, (last.last + last.next) / 2);
  const vf = [
    // In the encoder's time base (KEEP_FRAME_TIMES): the frames' own may hold neither `early` nor the cut
    // (1/30 s for Theora: halfway between two frames is a tie that `trim` rounded onto the next one).
    "settb=1/90000",
    `trim=${skip > 0 ? `start=${sec(skip)}:` : ""}end=${sec(cutAt - seek)}`,
    ...(early + skip > 0 ? [`setpts='max(0,round(PTS-${sec(early + skip)}/TB))'`] : []),
    ...squarePixels(video),
  ];
  // The audio over the interval the video presents (as a fast trim's: a source whose audio outlasts its
  // video ends with the video), cut by sample positions from where the decode starts (STAMP_FROM_FIRST, as
  // audio.trim's), the source's own placement kept (audio that starts after `start` stays late), encoded
  // so that it decodes to exactly those samples (exactAacArgs: fixture-mjpeg.mov's 8 kHz window of 0.45 s
  // decoded 0.512 s with the last AAC frame's padding).
  const audioEnd = last === null ? end : Math.min(end, last.end);
  const af = [
    STAMP_FROM_FIRST,
    `atrim=start=${sec(early + skip)}:end=${sec(audioEnd - seek)}`,
    `asetpts=round(PTS-${sec(early + skip)}/TB)`,
  ];
  const lastAt = last === null ? null : Math.max(0, last.last - start);
  // AMR: its samples read from a copy stamped by them, from the same time (a player's: less the lead); the
  // samples counted and encoded are that copy's.
  const amr = audio === null ? null : await amrAudioInput(ctx, input, seek - lead);
  const inputArgs = input.args(seek > 0 ? ["-ss", sec(seek)] : []);
  const audioArgs =
    audio === null
      ? []
      : await exactAacArgs(
          ctx,
          input,
          amr ?? inputArgs,
          amr === null ? audio : { ...audio, index: 0 },
          af,
          "160k",
        );
  await ctx
    .runFfmpeg(
      [
        ...inputArgs,
        ...(amr ?? []),
        ...["-map", `0:${video.index}`],
        ...(audio === null ? [] : ["-map", amr === null ? `0:${audio.index}` : "1:0"]),
        ...["-sn", "-dn", "-vf", vf.join(",")],
        ...["-c:v", "libx264", "-preset", ctx.config.x264Preset, "-crf", "20", "-pix_fmt", "yuv420p"],
        ...KEEP_FRAME_TIMES,
        ...(last === null || lastAt === null
          ? []
          : lastFrameLasts(lastAt, last.end - Math.max(last.last, start))),
        ...audioArgs,
        ...trimMuxOptions(container),
        ...["-f", container.muxer, out],
      ],
      { signal: ctx.signal, durationSec: end - start, onProgress: ctx.setProgress },
    )
    .catch((err: unknown) => preferSourceError(input, err));
  return { path: out, container, start: at };
}

export function videoTrim(p: JobParams<"video.trim">): PreparedJob {
  const params: TrimParams = { ...windowOf(p), mode: p.mode ?? "accurate" };
  return {
    probeArgs: params.mode === "fast" ? keyframeProbeArgs(params.start) : [],
    speculate: true,
    warm: params.mode === "fast",
    run: (ctx, input) => run(ctx, input, params),
  };
}
