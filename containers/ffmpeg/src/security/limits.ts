/** Every bound the engine enforces, in one place. Values from decisions.md §9 and §11 where it sets them. */

const MiB = 1024 * 1024;

export const LIMITS = {
  /** JSON request bodies sent to the engine. */
  maxRequestBodyBytes: 1 * MiB,
  /** Default source cap of a job when the request names none (synchronous audio/video limit). */
  defaultMaxSourceBytes: 512 * MiB,
  /** Largest cap a request may ask for (tasks send 4 GiB). */
  maxSourceBytesCeiling: 4 * 1024 * MiB,
  /** Default cap of POST /v1/fetch (images, decisions.md §9). */
  defaultMaxFetchBytes: 25 * MiB,
  /** Watermark logos are images too. */
  maxLogoBytes: 25 * MiB,
  /** Image sources (image.watermark) and logos: at most 25 MiB and 16.8 megapixels (decisions.md §9). */
  maxImageBytes: 25 * MiB,
  maxImagePixels: 16_800_000,
  /** Job time budget when the request names none, and the most it may ask for. */
  defaultTimeoutMs: 15 * 60 * 1000,
  maxTimeoutMs: 60 * 60 * 1000,
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
