/**
 * video.extract-cover: one frame as JPEG, PNG or WebP. `time` defaults to 1 s, or the middle of videos
 * shorter than 2 s; `width` and/or `height` resize keeping the aspect ratio (both: fit inside the box).
 */
import { stat } from "node:fs/promises";
import type { JobParams } from "@p6/contract/params";
import { invalid, unsupported } from "../protocol.ts";
import { CONTAINERS } from "./containers.ts";
import { runFfprobe } from "./ffmpeg.ts";
import { type Input, type JobContext, outputPath, type PreparedJob, preferSourceError } from "./job.ts";
import { playerLead } from "./media-info.ts";
import { outputInfo } from "./output-info.ts";
import { sec } from "./params.ts";
import { inexactSeekPoint } from "./source-timing.ts";

const FORMATS = ["jpeg", "png", "webp"] as const;
type CoverFormat = (typeof FORMATS)[number];

interface CoverParams {
  time: number | undefined;
  format: CoverFormat;
  width: number | undefined;
  height: number | undefined;
  quality: number;
}

function parse(p: JobParams<"video.extract-cover">): CoverParams {
  return {
    time: p.time,
    format: p.format ?? "jpeg",
    width: p.width,
    height: p.height,
    quality: p.quality ?? 85,
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

/**
 * Seconds before `time` from which a cover keeps decoded frames: two frame durations, so that the frame
 * shown at `time` (which starts less than one before it at a constant rate) is among them; at least 0.1 s,
 * at most 5 s. A frame starting earlier (a variable rate) is found by its packets (lastFrameAtOrBefore).
 */
const keepFrom = (fps: number): number => (fps > 0 ? Math.min(5, Math.max(0.1, 2 / fps)) : 0.1);

/**
 * Which frame a command gives: `shown`, the last one presented at or before `time` (the one on screen then),
 * or `next`, the first one at or after it (ffmpeg's input `-ss`).
 */
type Pick = "shown" | "next";

/**
 * Filters of a `shown` cover at `time` (seconds from the input's start) when decoding starts at `from`:
 * with `-copyts` frames keep the source's timestamps (`t` is `startTime + time` at `time`). `trim` ends the
 * decode at the first frame past `time` (its end is exclusive; 2 ms later, beyond a 1 ms tick's rounding, and
 * in microseconds: `settb`, since in the stream's time base 1.002 s rounds to 1.000 s where a tick is 40 ms,
 * an AVI's, and the frame at 1.000 s was cut); `select` keeps the frames at or before `time` (1 µs for
 * a time written to 6 decimals); `reverse` gives the last of them first. Decoding from the input's start,
 * nothing is shown before the first frame, so a time before it gives that frame (`eq(n,0)`), and the decode
 * runs `keep` seconds at least (a video starting after the file's start, e.g. after Opus pre-roll).
 */
function shownFilters(startTime: number, time: number, from: number, keep: number, seek: number): string {
  const at = startTime + time;
  const first = from === 0 ? "+eq(n\\,0)" : "";
  const end = (from === 0 ? Math.max(at, startTime + keep) : at) + 0.002;
  // Decoding from before `from` (an inexact demuxer's keyframe), the frames before it are not kept either:
  // `reverse` holds every frame it is given.
  const after = seek < from ? `gte(t\\,${sec(startTime + from)})*` : "";
  return `settb=AVTB,trim=end=${sec(end)},select='${after}lte(t\\,${sec(at + 1e-6)})${first}',reverse`;
}

async function extract(
  ctx: JobContext,
  input: Input,
  p: CoverParams,
  time: number,
  pick: Pick,
): Promise<string> {
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
  const resize =
    size.width === video.codedWidth && size.height === video.codedHeight && video.sar === 1
      ? []
      : [`scale=${size.width}:${size.height},setsar=1`];
  // ffmpeg seeks to the keyframe before `from` and drops the frames decoded before it (accurate seek).
  const keep = keepFrom(video.fpsValue);
  const from = pick === "shown" ? Math.max(0, time - keep) : time;
  // MPEG-TS: its seek lands after the keyframe `from` decodes from (source-timing.ts seekPoint); from
  // before that keyframe, found by its packets.
  const inexact = pick === "shown" ? await inexactSeekPoint(ctx, input, from) : null;
  const seek = inexact === null ? from : Math.min(from, inexact);
  const chain =
    pick === "shown" ? [shownFilters(input.info.startTime, time, from, keep, seek), ...resize] : resize;
  await ctx
    .runFfmpeg(
      [
        ...input.args(["-ss", sec(seek), ...decoder]),
        ...(pick === "shown" ? ["-copyts"] : []),
        ...["-map", `0:${video.index}`, "-frames:v", "1", "-an", "-sn", "-dn"],
        ...(chain.length > 0 ? ["-vf", chain.join(",")] : []),
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
 * Where the last video frame at or before `time` (seconds from the input's start) is presented; its packets
 * are listed, not decoded: the last LOOK_BACK seconds, else from the start (one frame shown longer). Null
 * when none is listed or their times are unknown. Packets an edit list hides (flag D) are never shown.
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
    if (before.length > 0) return Math.max(0, Math.max(...before) - startTime);
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
  // ffmpeg's time of the player's `time` (playerLead: from the earliest timestamp where that is below 0).
  const time = (p.time ?? (duration !== null && duration < 2 ? duration / 2 : 1)) + playerLead(input.info);
  // The frame on screen at `time`: the last one presented at or before it, from one ffmpeg decoding from
  // shortly before it (keepFrom).
  let out = await extract(ctx, input, p, time, "shown");
  let size = await sizeOf(out);
  if (size === 0) {
    // None of the frames decoded is at or before `time`: the one shown is older, held longer (a variable rate; a container or
    // audio outlasting the video: an 8×8 WebM of one frame at 0 states 1 s), found by its packets' times;
    // none before `time` (the video starts later): its first frame. When that does not decode either (a file
    // cut short), a few frames before the end, as before.
    const shown = await lastFrameAtOrBefore(ctx, input, time);
    const back = Math.max(0, (duration ?? time) - 3 / (video.fpsValue || 25));
    const tries: [number, Pick][] = [
      shown === null ? [time, "next"] : [shown, "shown"],
      [Math.min(back, time), "next"],
    ];
    for (const [at, pick] of tries) {
      out = await extract(ctx, input, p, at, pick);
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

export function videoExtractCover(p: JobParams<"video.extract-cover">): PreparedJob {
  const params = parse(p);
  return { probeArgs: [], speculate: true, warm: true, run: (ctx, input) => run(ctx, input, params) };
}
