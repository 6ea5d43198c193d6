/**
 * video.trim. `accurate` (default) re-encodes [start, end) to H.264/AAC MP4, frame-exact. `fast` copies the
 * video from the keyframe at or before `start` (reported as `start`), with its audio cut to the same interval
 * (trim-fast.ts); where no copy can present exactly that, it re-encodes as `accurate` does. `copied` says
 * which was done.
 */
import { stat } from "node:fs/promises";
import { invalid, unsupported } from "../protocol.ts";
import { CONTAINERS } from "./containers.ts";
import {
  emptyOutput,
  type Input,
  type JobContext,
  outputPath,
  type PreparedJob,
  preferSourceError,
} from "./job.ts";
import { outputInfo } from "./output-info.ts";
import { optEnum, readParams, readWindow, roundSec, sec, type Window } from "./params.ts";
import { holdLastFrame, KEEP_FRAME_TIMES, squarePixels } from "./reencode.ts";
import { videoEnd } from "./source-timing.ts";
import { type Cut, copyCut, keyframeProbeArgs, trimMuxOptions } from "./trim-fast.ts";

interface TrimParams extends Window {
  mode: "accurate" | "fast";
}

async function run(ctx: JobContext, input: Input, p: TrimParams) {
  const { video, duration } = input.info;
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

/** The accurate cut: [start, end) re-encoded to H.264/AAC MP4, frame-exact. */
async function encodeCut(ctx: JobContext, input: Input, start: number, end: number): Promise<Cut> {
  const video = input.info.video!;
  const { audio } = input.info;
  const container = CONTAINERS.mp4;
  const out = outputPath(ctx, container.ext);
  // A variable-rate source's frame can be shown past the window's end: held until `end` (source-timing.ts),
  // since a re-encode ends its last frame after one frame at the graph's rate. A source whose header says its
  // frames are evenly spaced is not listed: most are, and listing waits for the download to reach `end`.
  const last = video.steadyRate ? null : await videoEnd(ctx, input, end).catch(() => null);
  const vf = [...squarePixels(video), ...holdLastFrame(last, start)];
  await ctx
    .runFfmpeg(
      [
        ...input.args(["-ss", sec(start)]),
        ...["-t", sec(end - start), "-map", `0:${video.index}`],
        ...(audio === null ? [] : ["-map", `0:${audio.index}`]),
        ...["-sn", "-dn"],
        ...(vf.length > 0 ? ["-vf", vf.join(",")] : []),
        ...["-c:v", "libx264", "-preset", ctx.config.x264Preset, "-crf", "20", "-pix_fmt", "yuv420p"],
        ...KEEP_FRAME_TIMES,
        ...(audio === null ? [] : ["-c:a", "aac", "-b:a", "160k"]),
        ...trimMuxOptions(container),
        ...["-f", container.muxer, out],
      ],
      { signal: ctx.signal, durationSec: end - start, onProgress: ctx.setProgress },
    )
    .catch((err: unknown) => preferSourceError(input, err));
  return { path: out, container, start };
}

export function videoTrim(raw: unknown): PreparedJob {
  const p = readParams(raw, ["start", "end", "duration", "mode"]);
  const params: TrimParams = {
    ...readWindow(p),
    mode: optEnum(p, "mode", ["accurate", "fast"] as const) ?? "accurate",
  };
  return {
    probeArgs: params.mode === "fast" ? keyframeProbeArgs(params.start) : [],
    speculate: true,
    warm: params.mode === "fast",
    run: (ctx, input) => run(ctx, input, params),
  };
}
