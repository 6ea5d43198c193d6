import { sniff } from "@p6/contract/sniff";

const MEDIA_TYPES: Record<string, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  webp: "image/webp",
  mp4: "video/mp4",
  mov: "video/quicktime",
  m4a: "audio/mp4",
  webm: "video/webm",
  mkv: "video/x-matroska",
  avi: "video/x-msvideo",
  flv: "video/x-flv",
  mpegts: "video/mp2t",
  wav: "audio/wav",
  flac: "audio/flac",
  ogg: "audio/ogg",
  mp3: "audio/mpeg",
  aac: "audio/aac",
};

/** Every Content-Type an upload's bytes are served with (GET /v1/uploads/{id}/content). */
export const UPLOAD_MEDIA_TYPES = [...new Set(Object.values(MEDIA_TYPES)), "application/octet-stream"];

/** Bytes read from a complete upload's start to name its media type. */
export const SNIFF_BYTES = 4096;

/**
 * The media type of an upload from its first bytes, by the sniffing the engine applies to every source
 * (@p6/contract/sniff): the client's Content-Type or filename are never trusted. Anything the engine would
 * refuse is application/octet-stream.
 */
export function mediaTypeOf(head: Uint8Array): string {
  const sniffed = sniff(head);
  return (sniffed && MEDIA_TYPES[sniffed.format]) ?? "application/octet-stream";
}
