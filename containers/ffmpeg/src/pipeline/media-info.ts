/** What the operations need to know about an input, read from ffprobe's JSON. */
import type { ProbeOutput, ProbePacket, ProbeStream } from "./ffmpeg.ts";

export interface VideoInfo {
  index: number;
  codec: string;
  /**
   * Display size: what a player shows, the sample aspect ratio and rotation applied (decisions.md "Pixel
   * aspect ratio"): a 352×288 frame with pixels 63:44 wide is shown 504×288.
   */
  width: number;
  height: number;
  /** Coded size of a frame, rotation applied (equal to the display size when the pixels are square). */
  codedWidth: number;
  codedHeight: number;
  /** Width/height of one coded pixel (1: square). */
  sar: number;
  /** Reduced average frame rate, e.g. "30000/1001". */
  fps: string;
  fpsValue: number;
  /**
   * Whether the header says the frames are evenly spaced: ffprobe's r_frame_rate (the rate that times every
   * frame) and avg_frame_rate agree within 1 %. False for a variable-rate recording, and when either is unknown.
   */
  steadyRate: boolean;
  hasAlpha: boolean;
  pixFmt: string;
}

export interface AudioInfo {
  index: number;
  codec: string;
  sampleRate: number;
  channels: number;
  /** ffprobe's channel layout, e.g. "5.1(side)"; absent when unknown. */
  layout?: string;
}

export interface MediaInfo {
  /** Seconds, or null when the container does not say. */
  duration: number | null;
  startTime: number;
  video: VideoInfo | null;
  audio: AudioInfo | null;
  packets: ProbePacket[];
  /**
   * Decode and presentation times (s) of the first video stream's keyframes, when known without ffprobe
   * (mp4-guess.ts); ffprobe's answer has `packets` instead.
   */
  keyframes?: { dts: number; pts: number }[];
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** Reduces "60000/2002" to "30000/1001"; null for 0/0 and other non-rates. */
export function reduceRate(rate: string | undefined): string | null {
  const m = /^(\d+)\/(\d+)$/.exec(rate ?? "");
  if (m === null) return null;
  const num = Number(m[1]);
  const den = Number(m[2]);
  if (num === 0 || den === 0) return null;
  const g = gcd(num, den);
  return `${num / g}/${den / g}`;
}

const ALPHA_PIX_FMT = /^(yuva|gbrap|ya\d|ayuv)|rgba|bgra|argb|abgr/;

function hasAlpha(stream: ProbeStream): boolean {
  if (ALPHA_PIX_FMT.test(stream.pix_fmt ?? "")) return true;
  // VP8/VP9 in WebM keep alpha in a side channel: the pixel format says yuv420p, the tag says alpha.
  const tags = stream.tags ?? {};
  return Object.entries(tags).some(([k, v]) => k.toLowerCase() === "alpha_mode" && v === "1");
}

function rotation(stream: ProbeStream): number {
  const side = stream.side_data_list?.find((s) => typeof s.rotation === "number")?.rotation;
  if (side !== undefined) return side;
  const tag = Number(stream.tags?.rotate ?? 0);
  return Number.isFinite(tag) ? tag : 0;
}

/** The width/height ratio of one pixel ("63:44"); 1 when absent, unknown ("0:1") or invalid. */
export function sampleAspect(sar: string | undefined): number {
  const m = /^(\d+):(\d+)$/.exec(sar ?? "");
  const value = m === null ? 0 : Number(m[1]) / Number(m[2]);
  return Number.isFinite(value) && value > 0 ? value : 1;
}

/**
 * The size a player shows a `width`×`height` frame of pixels `sar` wide at: the height kept, the width
 * stretched (the MP4 track header's and Matroska's display width), rounded to whole pixels.
 */
export function displaySize(width: number, height: number, sar: number): { width: number; height: number } {
  return { width: Math.max(1, Math.round(width * sar)), height };
}

const num = (v: string | undefined): number | null => {
  const n = Number(v);
  return v !== undefined && v !== "N/A" && Number.isFinite(n) ? n : null;
};

/** A rate of ffprobe's ("30000/1001") in frames per second; 0 for "0/0" and anything that is not a rate. */
export function rateValue(rate: string | undefined): number {
  const m = /^(\d+)\/(\d+)$/.exec(rate ?? "");
  return m === null || Number(m[2]) === 0 ? 0 : Number(m[1]) / Number(m[2]);
}

/** Two of ffprobe's rates that are known and agree within 1 %. */
function sameRate(a: string | undefined, b: string | undefined): boolean {
  const [x, y] = [rateValue(a), rateValue(b)];
  return x > 0 && y > 0 && Math.abs(x - y) <= 0.01 * Math.max(x, y);
}

/**
 * Seconds of ffmpeg's input timeline before a player's 0. ffmpeg counts an input from its earliest timestamp
 * (`-ss`, and output times without it); a player's timeline starts at 0 where that is below 0 (a WebM whose
 * Opus pre-skip starts at -0.007 s: its first picture, at 0.007 s, is ffmpeg's 0.014). A start above 0 (a
 * timeline starting at 300 s) is both their 0.
 */
export const playerLead = (info: Pick<MediaInfo, "startTime">): number => Math.max(0, -info.startTime);

/**
 * Whether a stream holds packets, as far as the probe says: a declared stream with none (an MPEG-TS
 * program's AAC stream that never sends a packet; every track of an init-only fragmented MP4) has no start
 * time and no length, and an audio stream none of whose packets was read has no sample rate or channels,
 * which ffmpeg needs to decode or even map it (it failed the whole job). Such a stream is ignored, as a
 * player ignores it.
 */
function holdsPackets(s: ProbeStream): boolean {
  const length = num(s.duration);
  if (num(s.start_time) === null && (length === null || length <= 0)) return false;
  return s.codec_type !== "audio" || (Number(s.sample_rate ?? 0) > 0 && (s.channels ?? 0) > 0);
}

export function mediaInfo(probe: ProbeOutput): MediaInfo {
  const streams = (probe.streams ?? []).filter(holdsPackets);
  const videoStream = streams.find(
    (s) => s.codec_type === "video" && (s.disposition?.attached_pic ?? 0) === 0 && (s.width ?? 0) > 0,
  );
  const audioStream = streams.find((s) => s.codec_type === "audio");
  let video: VideoInfo | null = null;
  if (videoStream !== undefined) {
    const fps = reduceRate(videoStream.avg_frame_rate) ?? reduceRate(videoStream.r_frame_rate) ?? "0/1";
    const quarter = Math.abs(rotation(videoStream)) % 180 === 90;
    const w = videoStream.width ?? 0;
    const h = videoStream.height ?? 0;
    const sar = sampleAspect(videoStream.sample_aspect_ratio);
    const shown = displaySize(w, h, sar);
    video = {
      index: videoStream.index,
      codec: videoStream.codec_name ?? "unknown",
      width: quarter ? shown.height : shown.width,
      height: quarter ? shown.width : shown.height,
      codedWidth: quarter ? h : w,
      codedHeight: quarter ? w : h,
      sar,
      fps,
      fpsValue: rateValue(fps),
      steadyRate: sameRate(videoStream.r_frame_rate, videoStream.avg_frame_rate),
      hasAlpha: hasAlpha(videoStream),
      pixFmt: videoStream.pix_fmt ?? "",
    };
  }
  const audio: AudioInfo | null =
    audioStream === undefined
      ? null
      : {
          index: audioStream.index,
          codec: audioStream.codec_name ?? "unknown",
          sampleRate: Number(audioStream.sample_rate ?? 0),
          channels: audioStream.channels ?? 0,
          ...(audioStream.channel_layout === undefined ? {} : { layout: audioStream.channel_layout }),
        };
  // A duration of 0 says nothing (an AVI whose only frame does not decode states 0): unknown, like none.
  const positive = (v: string | undefined) => {
    const n = num(v);
    return n !== null && n > 0 ? n : null;
  };
  const duration =
    positive(probe.format?.duration) ?? positive(videoStream?.duration) ?? positive(audioStream?.duration);
  return {
    duration,
    startTime: num(probe.format?.start_time) ?? 0,
    video,
    audio,
    packets: probe.packets ?? [],
  };
}
