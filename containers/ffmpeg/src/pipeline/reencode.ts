/**
 * What every H.264 re-encode of a video (accurate trim, watermark) shares: the picture as a player shows it,
 * in square pixels, and the source's own frame times (decisions.md "Pixel aspect ratio" and "Variable frame
 * rate").
 */
import type { VideoInfo } from "./media-info.ts";
import { sec } from "./params.ts";
import type { VideoEnd } from "./source-timing.ts";

/** The even size nearest `n` (libx264 with yuv420p needs even dimensions; an odd size goes one up). */
export const evenSize = (n: number): number => Math.max(2, 2 * Math.round(n / 2));

/** The size a re-encode of `video` is written at: its display size, made even. */
export function reencodedSize(video: VideoInfo): { width: number; height: number } {
  return { width: evenSize(video.width), height: evenSize(video.height) };
}

/**
 * Filters that turn the (upright) frames of `video` into square pixels at its display size, so that a
 * player that ignores the pixel aspect ratio shows the same picture and a mark drawn on them is not
 * stretched: empty when the frames already are.
 */
export function squarePixels(video: VideoInfo): string[] {
  const { width, height } = reencodedSize(video);
  const scaled = width !== video.codedWidth || height !== video.codedHeight;
  return [
    ...(scaled ? [`scale=${width}:${height}`] : []),
    ...(scaled || video.sar !== 1 ? ["setsar=1"] : []),
  ];
}

/**
 * Output options that keep every frame at its source time: ffmpeg 5.1's default for MP4 is a constant rate
 * (frames of a variable-rate phone or screen recording dropped or repeated); `vfr` passes frames through
 * (dropping only those with the same time). `-vsync` (video only) rather than 5.1's `-fps_mode`, which
 * the npm-shipped 2018 build does not know. The encoder's time base would be 1/(average rate), onto which
 * several frame times round; 1/90000 s holds the frame times of the usual rates (24, 25, 30, 30000/1001,
 * 50, 60 fps) and milliseconds exactly, and any other time to 11 µs. ("-1", the source stream's, does not reach the output
 * of a filtergraph with two inputs, the watermark's.)
 */
export const KEEP_FRAME_TIMES = ["-vsync", "vfr", "-enc_time_base:v", "1:90000"] as const;

/** Frames a held last frame may be repeated as (a minute at 30 fps): past that the source's end is not kept. */
const MAX_HOLD_FRAMES = 1800;

/**
 * Filters that show the last frame of a filtergraph's video until the source's video ends (`end`,
 * source-timing.ts), for a last frame that lasts longer than one frame at the graph's rate (a variable-rate
 * source): ffmpeg 5.1 gives frames out of a filtergraph no duration, so the encoder ends the last one after
 * 1/rate. The frame is cloned (tpad) at the graph's rate until the end, within half a frame; tpad's first
 * clone has the last frame's own time and is dropped (select). Empty when there is nothing to hold.
 * `shift`: seconds the input's timestamps were moved earlier (-itsoffset).
 */
export function holdLastFrame(end: VideoEnd | null, shift = 0): string[] {
  if (end === null || end.graphRate <= 0) return [];
  const hold = end.end - end.last;
  const frames = Math.round(hold * end.graphRate);
  if (frames < 2 || frames > MAX_HOLD_FRAMES) return [];
  const lastTime = end.last - shift - 1e-4;
  return [
    `tpad=stop_mode=clone:stop_duration=${sec(hold)}`,
    `select='lt(t,${sec(lastTime)})+not(eq(pts,prev_pts))'`,
  ];
}
