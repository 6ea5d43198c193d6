/** What the operations need to know about an input, read from ffprobe's JSON. */
import type { ProbeOutput, ProbePacket, ProbeStream } from "./ffmpeg.ts";

export interface VideoInfo {
  index: number;
  codec: string;
  /** Display size (rotation applied). */
  width: number;
  height: number;
  /** Reduced average frame rate, e.g. "30000/1001". */
  fps: string;
  fpsValue: number;
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

const num = (v: string | undefined): number | null => {
  const n = Number(v);
  return v !== undefined && v !== "N/A" && Number.isFinite(n) ? n : null;
};

export function mediaInfo(probe: ProbeOutput): MediaInfo {
  const streams = probe.streams ?? [];
  const videoStream = streams.find(
    (s) => s.codec_type === "video" && (s.disposition?.attached_pic ?? 0) === 0 && (s.width ?? 0) > 0,
  );
  const audioStream = streams.find((s) => s.codec_type === "audio");
  let video: VideoInfo | null = null;
  if (videoStream !== undefined) {
    const fps = reduceRate(videoStream.avg_frame_rate) ?? reduceRate(videoStream.r_frame_rate) ?? "0/1";
    const [n, d] = fps.split("/").map(Number);
    const quarter = Math.abs(rotation(videoStream)) % 180 === 90;
    const w = videoStream.width ?? 0;
    const h = videoStream.height ?? 0;
    video = {
      index: videoStream.index,
      codec: videoStream.codec_name ?? "unknown",
      width: quarter ? h : w,
      height: quarter ? w : h,
      fps,
      fpsValue: (n ?? 0) / (d || 1),
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
  const duration =
    num(probe.format?.duration) ?? num(videoStream?.duration) ?? num(audioStream?.duration) ?? null;
  return {
    duration,
    startTime: num(probe.format?.start_time) ?? 0,
    video,
    audio,
    packets: probe.packets ?? [],
  };
}
