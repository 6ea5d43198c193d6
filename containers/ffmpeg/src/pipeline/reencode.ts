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
 * 1/rate. The frame is cloned (tpad) and each clone put one frame at the graph's rate after the one before
 * it (setpts), until the end, within half a frame: tpad clones from where its input ended, which is the
 * last frame's time, the video's stated end or the dropped next frame's time depending on the graph, so
 * the clones' own times are not used. A clone on the last frame's own time is dropped (select). Empty when
 * there is nothing to hold. `shift`: seconds the input's timestamps were moved earlier (-itsoffset, or a
 * trim's -ss).
 *
 * For a window's end (`end.next` set: a frame follows after it), the graph's input is ended at the window's
 * end (trim), and clones from its end on are dropped (a second trim, half a frame early against rounding).
 */
export function holdLastFrame(end: VideoEnd | null, shift = 0): string[] {
  if (end === null || end.graphRate <= 0) return [];
  const hold = end.end - end.last;
  const frames = Math.round(hold * end.graphRate);
  if (frames < 2 || frames > MAX_HOLD_FRAMES) return [];
  const last = end.last - shift;
  const held = [
    `tpad=stop_mode=clone:stop_duration=${sec(hold)}`,
    `setpts='if(gt(T,${sec(last + 1e-4)}),PREV_OUTPTS+1/(${end.graphRate}*TB),PTS)'`,
    `select='lt(t,${sec(last - 1e-4)})+not(eq(pts,prev_pts))'`,
  ];
  if (end.next === null) return held;
  const windowEnd = end.end - shift;
  return [`trim=end=${sec(windowEnd)}`, ...held, `trim=end=${sec(windowEnd - 0.5 / end.graphRate)}`];
}
