/**
 * video.extract-cover: one frame as JPEG, PNG or WebP. `time` defaults to 1 s, or the middle of videos
 * shorter than 2 s; `width` and/or `height` resize keeping the aspect ratio (both: fit inside the box).
 */
import { stat } from "node:fs/promises";
import { invalid, unsupported } from "../protocol.ts";
import { LIMITS } from "../security/limits.ts";
import { CONTAINERS } from "./containers.ts";
import { runFfprobe } from "./ffmpeg.ts";
import { type Input, type JobContext, outputPath, type PreparedJob, preferSourceError } from "./job.ts";
import { outputInfo } from "./output-info.ts";
import { forbid, optEnum, optNumber, readParams, SECONDS, sec } from "./params.ts";

const FORMATS = ["jpeg", "png", "webp"] as const;
type CoverFormat = (typeof FORMATS)[number];

interface CoverParams {
  time: number | undefined;
  format: CoverFormat;
  width: number | undefined;
  height: number | undefined;
  quality: number;
}

function parse(raw: unknown): CoverParams {
  const p = readParams(raw, ["time", "format", "width", "height", "quality"]);
  const format = optEnum(p, "format", FORMATS) ?? "jpeg";
  const dim = { min: 1, max: LIMITS.maxOutputDimension, integer: true };
  if (format === "png") forbid(p, "quality", "applies to jpeg and webp only");
  return {
    time: optNumber(p, "time", SECONDS),
    format,
    width: optNumber(p, "width", dim),
    height: optNumber(p, "height", dim),
    quality: optNumber(p, "quality", { min: 1, max: 100, integer: true }) ?? 85,
  };
}

/** Output size keeping the display aspect ratio. */
export function coverSize(
  w: number,
  h: number,
  width?: number,
  height?: number,
): { width: number; height: number } {
  const byWidth = (tw: number) => ({ width: tw, height: Math.max(1, Math.round((h * tw) / w)) });
  const byHeight = (th: number) => ({ width: Math.max(1, Math.round((w * th) / h)), height: th });
  if (width !== undefined && height !== undefined) {
    return width / w <= height / h ? byWidth(width) : byHeight(height);
  }
  if (width !== undefined) return byWidth(width);
  if (height !== undefined) return byHeight(height);
  return { width: w, height: h };
}

/** Pixel format each image encoder gets (with or without alpha). */
export function imagePixelFormat(format: "jpeg" | "png" | "webp", alpha: boolean): string {
  if (format === "jpeg") return "yuvj420p";
  if (format === "png") return alpha ? "rgba" : "rgb24";
  return alpha ? "yuva420p" : "yuv420p";
}

/** Encoder arguments of an image output; `quality` 1–100 applies to JPEG and WebP. */
export function imageEncoderArgs(format: "jpeg" | "png" | "webp", quality: number, alpha: boolean): string[] {
  const pixFmt = ["-pix_fmt", imagePixelFormat(format, alpha)];
  if (format === "jpeg") {
    // ffmpeg's JPEG scale: 2 (best) … 31 (worst)
    const q = Math.round(2 + ((100 - quality) * 29) / 99);
    return ["-c:v", "mjpeg", ...pixFmt, "-q:v", String(q)];
  }
  if (format === "png") return ["-c:v", "png", ...pixFmt];
  return ["-c:v", "libwebp", "-quality", String(quality), ...pixFmt];
}

async function extract(ctx: JobContext, input: Input, p: CoverParams, time: number): Promise<string> {
  const video = input.info.video!;
  const size = coverSize(video.width, video.height, p.width, p.height);
  const container = CONTAINERS[p.format];
  const out = outputPath(ctx, container.ext);
  // The native VP8/VP9 decoders drop the alpha plane; libvpx keeps it for PNG/WebP covers.
  const alpha = video.hasAlpha && p.format !== "jpeg";
  const decoder =
    alpha && (video.codec === "vp9" || video.codec === "vp8")
      ? ["-c:v", video.codec === "vp9" ? "libvpx-vp9" : "libvpx"]
      : [];
  // Images are shown pixel for pixel (browsers ignore a JPEG's pixel density): square pixels at the size.
  const filters =
    size.width === video.codedWidth && size.height === video.codedHeight && video.sar === 1
      ? []
      : ["-vf", `scale=${size.width}:${size.height},setsar=1`];
  await ctx
    .runFfmpeg(
      [
        ...input.args(["-ss", sec(time), ...decoder]),
        ...["-map", `0:${video.index}`, "-frames:v", "1", "-an", "-sn", "-dn"],
        ...filters,
        ...imageEncoderArgs(p.format, p.quality, alpha),
        ...["-f", container.muxer, out],
      ],
      { signal: ctx.signal },
    )
    .catch((err: unknown) => preferSourceError(input, err));
  return out;
}

/** Bytes of the output, 0 when ffmpeg wrote none (an image muxer given no frame may not create the file). */
const sizeOf = (file: string): Promise<number> =>
  stat(file).then(
    (s) => s.size,
    () => 0,
  );

/** Seconds of the source before `time` whose packets are listed first for the frame shown at `time`. */
const LOOK_BACK = 10;
/** Seconds past `time` listed too: with B-frames, a frame shown before it may come later in decode order. */
const REORDER = 2;

/**
 * Where the last video frame at or before `time` (seconds from the input's start) is presented, a hair early
 * so that a seek there lands on it (ffmpeg keeps the frames at or after its `-ss`); its packets are listed,
 * not decoded: the last LOOK_BACK seconds, else from the start (one frame shown longer). Null when none is
 * listed or their times are unknown. Packets an edit list hides (flag D) are never shown.
 */
async function lastFrameAtOrBefore(ctx: JobContext, input: Input, time: number): Promise<number | null> {
  const { startTime } = input.info;
  const at = startTime + time;
  for (const from of [Math.max(0, at - LOOK_BACK), 0]) {
    const probe = await runFfprobe(
      ctx.config.binaries.ffprobe,
      [
        ...[
          "-select_streams",
          String(input.info.video!.index),
          "-read_intervals",
          `${sec(from)}%${sec(at + REORDER)}`,
        ],
        ...["-show_entries", "packet=pts_time,flags", ...input.args()],
      ],
      ctx.signal,
    );
    const times = (probe.packets ?? [])
      .filter((packet) => !(packet.flags ?? "").includes("D"))
      .map((packet) => Number(packet.pts_time ?? Number.NaN));
    if (times.some((t) => !Number.isFinite(t))) return null;
    const before = times.filter((t) => t <= at + 1e-6);
    if (before.length > 0) return Math.max(0, Math.max(...before) - startTime - 1e-6);
    if (from === 0) return null;
  }
  return null;
}

async function run(ctx: JobContext, input: Input, p: CoverParams) {
  const video = input.info.video;
  if (video === null) throw unsupported("the source has no video stream");
  const duration = input.info.duration;
  if (p.time !== undefined && duration !== null && p.time >= duration) {
    throw invalid("params.time", `time (${p.time} s) is not before the end of the video (${duration} s)`);
  }
  const time = p.time ?? (duration !== null && duration < 2 ? duration / 2 : 1);
  let out = await extract(ctx, input, p, time);
  let size = await sizeOf(out);
  if (size === 0) {
    // No frame starts at or after `time`: the one shown then is the last before it, still on screen (a
    // container's duration often runs past its video's last frame; an 8×8 WebM of one frame at 0 states 1 s).
    // When that frame does not decode either (a file cut short), a few frames before the end, as before.
    const shown = await lastFrameAtOrBefore(ctx, input, time);
    const back = Math.max(0, (duration ?? time) - 3 / (video.fpsValue || 25));
    for (const at of [...(shown === null ? [] : [shown]), Math.min(back, time)]) {
      out = await extract(ctx, input, p, at);
      size = await sizeOf(out);
      if (size > 0) break;
    }
    if (size === 0) throw unsupported("no frame could be decoded at that time");
  }
  const info = await outputInfo(out, p.format, ctx.config.binaries.ffprobe, ctx.signal);
  ctx.setProgress(1);
  return {
    kind: "file" as const,
    path: out,
    contentType: CONTAINERS[p.format].contentType,
    result: { format: p.format, size_bytes: size, width: info.width ?? 0, height: info.height ?? 0 },
  };
}

export function videoExtractCover(raw: unknown): PreparedJob {
  const params = parse(raw);
  return { probeArgs: [], speculate: true, warm: true, run: (ctx, input) => run(ctx, input, params) };
}
