/**
 * video.trim. `accurate` (default) re-encodes to H.264/AAC MP4 and is frame-exact. `fast` copies the
 * streams from the keyframe at or before `start`, so it is as quick as reading the bytes; the result then
 * reports that keyframe as the actual start.
 */
import { stat } from "node:fs/promises";
import { invalid, unsupported } from "../protocol.ts";
import { CONTAINERS, type Container } from "./containers.ts";
import { runFfprobe } from "./ffmpeg.ts";
import {
  emptyOutput,
  type Input,
  type JobContext,
  outputPath,
  type PreparedJob,
  preferSourceError,
} from "./job.ts";
import { mediaInfo } from "./media-info.ts";
import { outputInfo } from "./output-info.ts";
import { optEnum, readParams, readWindow, roundSec, sec, type Window } from "./params.ts";
import { KEEP_FRAME_TIMES, squarePixels } from "./reencode.ts";

interface TrimParams extends Window {
  mode: "accurate" | "fast";
}

/** Packets read after seeking to find the keyframe at or before start. */
const KEYFRAME_SCAN = "+#64";

function keyframeProbeArgs(absoluteStart: number): string[] {
  return [
    "-show_packets",
    "-show_entries",
    "packet=stream_index,pts_time,flags",
    "-read_intervals",
    `${sec(absoluteStart)}%${KEYFRAME_SCAN}`,
  ];
}

/** Seeks to the last keyframe at or before start: the first video packet ffprobe reads after its seek. */
async function keyframeAtOrBefore(ctx: JobContext, input: Input, start: number): Promise<number> {
  const video = input.info.video!;
  const { keyframes } = input.info;
  if (keyframes !== undefined && input.info.startTime === 0) {
    // Read from the MP4 index (a guess, see speculate.ts): like ffprobe's seek, by decode time.
    const key = keyframes.filter((k) => k.dts <= start + 1e-9).at(-1);
    return key === undefined ? start : Math.min(start, Math.max(0, key.pts));
  }
  let packets = input.info.packets;
  if (input.info.startTime !== 0 || packets.length === 0) {
    // The first probe assumed the file starts at 0; ask again with the real origin.
    const probe = await runFfprobe(
      ctx.config.binaries.ffprobe,
      [...keyframeProbeArgs(start + input.info.startTime), ...input.args()],
      ctx.signal,
    );
    packets = mediaInfo(probe).packets;
  }
  const key = packets.find((p) => p.stream_index === video.index && (p.flags ?? "").startsWith("K"));
  const pts = Number(key?.pts_time);
  if (key === undefined || !Number.isFinite(pts)) return start;
  return Math.min(start, Math.max(0, pts - input.info.startTime));
}

/** Codecs the MP4 muxer takes as they are (no PCM, H.263, AMR, …; FLAC in MP4 is still experimental in 5.1). */
const MP4_CODECS = new Set([
  "h264",
  "hevc",
  "av1",
  "vp9",
  "mpeg4",
  "mjpeg",
  "aac",
  "mp3",
  "alac",
  "opus",
  "ac3",
  "eac3",
]);

/**
 * The container a stream copy goes into: the source's family when it holds the copied codecs (MP4 for
 * MP4/MOV/3GP, WebM for WebM), Matroska otherwise (it holds them all: a camera's MJPEG with PCM, a phone's
 * H.263 with AMR).
 */
function copyContainer(input: Input): Container {
  const codecs = [input.info.video?.codec, input.info.audio?.codec].filter((c) => c !== undefined);
  if (input.sniffed.demuxer === "mov" && codecs.every((c) => MP4_CODECS.has(c))) return CONTAINERS.mp4;
  if (input.sniffed.format === "webm") return CONTAINERS.webm;
  return CONTAINERS.mkv;
}

async function run(ctx: JobContext, input: Input, p: TrimParams) {
  const { video, audio, duration } = input.info;
  if (video === null) throw unsupported("the source has no video stream");
  if (duration !== null && p.start >= duration) {
    throw invalid("params.start", `start (${p.start} s) is beyond the media's duration (${duration} s)`);
  }
  const end = duration === null ? p.end : Math.min(p.end, duration);
  const maps = [
    "-map",
    `0:${video.index}`,
    ...(audio === null ? [] : ["-map", `0:${audio.index}`]),
    "-sn",
    "-dn",
  ];
  let start = p.start;
  let container: Container = CONTAINERS.mp4;
  let args: string[];
  if (p.mode === "fast") {
    start = await keyframeAtOrBefore(ctx, input, p.start);
    container = copyContainer(input);
    // Seek a hair past the keyframe so rounding can never land on the keyframe before it.
    // The muxer's default timestamp handling (MP4 edit lists) makes the copy start at 0.
    args = [
      ...input.args(["-ss", sec(start + 0.001)]),
      "-t",
      sec(end - start - 0.001),
      ...maps,
      "-c",
      "copy",
    ];
  } else {
    const vf = squarePixels(video);
    args = [
      ...input.args(["-ss", sec(start)]),
      ...["-t", sec(end - start), ...maps],
      ...(vf.length > 0 ? ["-vf", vf.join(",")] : []),
      ...["-c:v", "libx264", "-preset", ctx.config.x264Preset, "-crf", "20", "-pix_fmt", "yuv420p"],
      ...KEEP_FRAME_TIMES,
      ...(audio === null ? [] : ["-c:a", "aac", "-b:a", "160k"]),
    ];
  }
  const out = outputPath(ctx, container.ext);
  await ctx
    .runFfmpeg([...args, ...container.options, "-f", container.muxer, out], {
      signal: ctx.signal,
      durationSec: end - start,
      onProgress: ctx.setProgress,
    })
    .catch((err: unknown) => preferSourceError(input, err));
  const { size } = await stat(out);
  const info = await outputInfo(out, container.format, ctx.config.binaries.ffprobe, ctx.signal);
  const outDuration = info.duration ?? 0;
  if (info.width === undefined || outDuration <= 0) {
    // Nothing to present: the window holds no frame (shorter than a frame, or past where the media really ends).
    throw emptyOutput(input, "the source has no decodable video frame between start and end");
  }
  return {
    kind: "file" as const,
    path: out,
    contentType: container.contentType,
    result: {
      format: container.format,
      size_bytes: size,
      width: info.width,
      height: info.height ?? video.height,
      duration: roundSec(outDuration),
      start: roundSec(start),
      end: roundSec(start + outDuration),
    },
  };
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
