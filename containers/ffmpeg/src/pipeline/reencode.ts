/**
 * What every H.264 re-encode of a video (accurate trim, watermark) shares: the picture as a player shows it,
 * in square pixels, and the source's own frame times (decisions.md "Pixel aspect ratio" and "Variable frame
 * rate").
 */
import type { VideoInfo } from "./media-info.ts";

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

/** The output's video time base (KEEP_FRAME_TIMES) and the MP4 track's timescale that keeps it. */
const TICKS = 90_000;

/**
 * Output options that show the encoded video's last frame, the one at `at` seconds of the output, for
 * `duration` seconds (until the source's next frame, the video's end or a window's end; source-timing.ts):
 * ffmpeg 5.1 gives frames out of a filtergraph no duration, so the encoder ends the last one after one frame
 * at the graph's rate (a variable-rate recording whose last frame is shown 1.57 s lost those seconds; a
 * window ending within a frame ran to that frame's end). The duration is the last packet's (setts), which the
 * MP4 muxer writes as the last sample's; every other sample lasts until the next one's decode time, so the
 * encoder makes no B-frames, whose decode order would put another frame last. Repeating the frame instead
 * would add frames the source does not have. Times are in the encoder's and the track's time base (1/90000
 * s, set here for both): ffmpeg 5.1 tells bitstream filters a stream's time base before the muxer settles it.
 */
export function lastFrameLasts(at: number, duration: number): string[] {
  const ticks = (s: number) => Math.max(1, Math.round(s * TICKS));
  const from = Math.max(0, Math.round((at - 5e-4) * TICKS));
  return [
    ...["-bf", "0", "-video_track_timescale", String(TICKS)],
    // setts rewrites pts and dts from its `ts` expression unless they are given: kept as they are.
    ...["-bsf:v", `setts=pts=PTS:dts=DTS:duration='if(gte(PTS\\,${from})\\,${ticks(duration)}\\,DURATION)'`],
  ];
}
