/** Every bound the engine enforces, in one place. Values from decisions.md §9 and §11 where it sets them. */
import { EngineError, WIRE_LIMITS } from "../protocol.ts";

const MiB = 1024 * 1024;

export const LIMITS = {
  /** JSON request bodies sent to the engine: a job's text_mark PNG (≤ 8 MiB) in base64 fits. */
  maxRequestBodyBytes: WIRE_LIMITS.maxRequestBodyBytes,
  /** Default source cap of a job when the request names none (synchronous audio/video limit). */
  defaultMaxSourceBytes: 512 * MiB,
  /** Default cap of POST /v1/fetch (images, decisions.md §9). */
  defaultMaxFetchBytes: 25 * MiB,
  /** Watermark logos are images too. */
  maxLogoBytes: 25 * MiB,
  /** Image sources (image.watermark) and logos: at most 25 MiB and 16.8 megapixels (decisions.md §9). */
  maxImageBytes: 25 * MiB,
  maxImagePixels: 16_800_000,
  /**
   * Video sources: the largest frame H.264 and HEVC level 6.2 allow (139,264 macroblocks, e.g. 8192×4352),
   * which holds 8K UHD, DCI 8K and 8192×4096 360° video. Decoding costs memory by the frame: a 16384×8192
   * frame (4× this) drove ffmpeg to 1.6 GiB for one cover.
   */
  maxVideoPixels: 35_651_584,
  /**
   * Video sources: frames per second. High-speed cameras record up to 1000; Matroska reports 1000 (its time
   * base) for variable-rate streams without an average, so the cap must hold that.
   */
  maxVideoFps: 1000,
  /** Job time budget when the request names none (the most it may ask for: WIRE_LIMITS.maxTimeoutMs). */
  defaultTimeoutMs: 15 * 60 * 1000,
  /** Time budget of POST /v1/fetch when the request names none. */
  defaultFetchTimeoutMs: 60 * 1000,
  /** Redirects followed per fetch, each re-checked against the address policy. */
  maxRedirects: 5,
  /** ffprobe/ffmpeg input probing bounds (bytes, microseconds). */
  probeSizeBytes: 10_000_000,
  analyzeDurationUs: 10_000_000,
  /** ffprobe JSON larger than this is refused (a hostile file could list a huge number of streams). */
  maxProbeOutputBytes: 4 * MiB,
  /** How far a source download may run ahead of the bytes ffmpeg has asked for. */
  downloadAheadBytes: 8 * MiB,
  /**
   * The download's lead before its readers have read more than this; it grows with what they read, up to
   * downloadAheadBytes (source.ts). A probe reads a few hundred KB of a faststart file and no longer downloads
   * 8 MiB it never reads: measured (`npm run bench:engine-cpu`, 9.4 MB clip), the engine's Node spent 316 ms
   * of CPU per probe with a fixed 8 MiB lead, 126 ms with this one (docs/performance.md).
   */
  downloadLeadBytes: 256 * 1024,
  /** Bytes sniffed for the media type before anything else runs. */
  sniffBytes: 64 * 1024,
  /** Largest cover/frame dimension we produce. */
  maxOutputDimension: 8192,
  /** ffmpeg stderr kept for the log (tail). */
  stderrTailBytes: 8 * 1024,
} as const;

export function describeBytes(bytes: number): string {
  if (bytes >= 1024 * MiB && bytes % (1024 * MiB) === 0) return `${bytes / (1024 * MiB)} GiB`;
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes >= MiB) return `${(bytes / MiB).toFixed(1)} MiB`;
  return `${bytes} bytes`;
}

type VideoSize = { width: number; height: number; fpsValue: number };

/**
 * Refuses (413, naming the limit) a video stream beyond the pixel or frame-rate cap, from what the probe (or
 * the MP4 index) says, before any ffmpeg decodes it. Images have their own cap, checked from their header.
 */
export function checkVideoLimits<T extends { video: VideoSize | null }>(info: T): T {
  const { video } = info;
  if (video === null) return info;
  const pixels = video.width * video.height;
  if (pixels > LIMITS.maxVideoPixels) {
    throw new EngineError(
      "REQUEST_BODY_TOO_LARGE",
      `the source video is ${video.width}×${video.height} (${(pixels / 1e6).toFixed(1)} megapixels), over the limit of ${(LIMITS.maxVideoPixels / 1e6).toFixed(1)} megapixels per frame`,
    );
  }
  if (video.fpsValue > LIMITS.maxVideoFps) {
    throw new EngineError(
      "REQUEST_BODY_TOO_LARGE",
      `the source video runs at ${Math.round(video.fpsValue)} frames per second, over the limit of ${LIMITS.maxVideoFps}`,
    );
  }
  return info;
}
