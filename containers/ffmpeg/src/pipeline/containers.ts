/** Output containers: how each `format` is muxed and served. */
import type { OutputFormat } from "../protocol.ts";

export interface Container {
  format: OutputFormat;
  /** ffmpeg muxer (-f). */
  muxer: string;
  ext: string;
  contentType: string;
  /** Extra muxer options. */
  options: string[];
}

const FASTSTART = ["-movflags", "+faststart"];

export const CONTAINERS: Record<OutputFormat, Container> = {
  mp4: { format: "mp4", muxer: "mp4", ext: "mp4", contentType: "video/mp4", options: FASTSTART },
  webm: { format: "webm", muxer: "webm", ext: "webm", contentType: "video/webm", options: [] },
  mkv: { format: "mkv", muxer: "matroska", ext: "mkv", contentType: "video/x-matroska", options: [] },
  jpeg: { format: "jpeg", muxer: "image2pipe", ext: "jpg", contentType: "image/jpeg", options: [] },
  png: { format: "png", muxer: "image2pipe", ext: "png", contentType: "image/png", options: [] },
  webp: { format: "webp", muxer: "image2pipe", ext: "webp", contentType: "image/webp", options: [] },
  mp3: { format: "mp3", muxer: "mp3", ext: "mp3", contentType: "audio/mpeg", options: [] },
  m4a: { format: "m4a", muxer: "mp4", ext: "m4a", contentType: "audio/mp4", options: FASTSTART },
  wav: { format: "wav", muxer: "wav", ext: "wav", contentType: "audio/wav", options: [] },
  flac: { format: "flac", muxer: "flac", ext: "flac", contentType: "audio/flac", options: [] },
  opus: { format: "opus", muxer: "opus", ext: "opus", contentType: "audio/ogg; codecs=opus", options: [] },
  ogg: { format: "ogg", muxer: "ogg", ext: "ogg", contentType: "audio/ogg", options: [] },
  mka: { format: "mka", muxer: "matroska", ext: "mka", contentType: "audio/x-matroska", options: [] },
};

/** The container an audio stream of `codec` can be copied into unchanged, or null when none fits. */
export function audioCopyContainer(codec: string): Container | null {
  if (codec === "mp3") return CONTAINERS.mp3;
  if (codec === "aac" || codec === "alac") return CONTAINERS.m4a;
  if (/^pcm_(s16le|s24le|s32le|u8|f32le|f64le|alaw|mulaw)$/.test(codec)) return CONTAINERS.wav;
  if (codec === "flac") return CONTAINERS.flac;
  if (codec === "opus") return CONTAINERS.opus;
  if (codec === "vorbis") return CONTAINERS.ogg;
  if (["ac3", "eac3", "dts", "truehd", "mp2", "wmav2"].includes(codec) || codec.startsWith("pcm_")) {
    return CONTAINERS.mka;
  }
  return null;
}
