/**
 * The media engine's protocol, version 1: the one definition both sides compile against (the Worker's
 * client in src/engine, the engine's server in containers/ffmpeg). The wire format is described in
 * containers/ffmpeg/README.md. Types and constants only: each side keeps its own behaviour (the Worker's
 * MediaEngine client, the engine's EngineError).
 */

export const PROTOCOL_VERSION = 1;

/**
 * Operations the engine runs (decisions.md §1): everything but image.watermark, which the Worker runs itself
 * up to 2.2 megapixels and hands to the engine above that (src/operations/image-watermark.ts).
 */
export const JOB_TYPES = [
  "video.watermark",
  "video.extract-cover",
  "video.trim",
  "audio.trim",
  "video.extract-audio",
  "video.probe",
  "image.watermark",
] as const;
export type JobType = (typeof JOB_TYPES)[number];

/** A job's priority: "low" for tasks, which wait behind synchronous calls (X-Engine-Priority on the wire). */
export type Priority = "low" | "normal";

/** Public error codes (interface.md's error table) the engine may answer with, and their HTTP status. */
export const ERROR_STATUS = {
  VALIDATION_INVALID_ARGUMENT: 400,
  AUTH_UNAUTHORIZED: 401,
  RESOURCE_NOT_FOUND: 404,
  REQUEST_BODY_TOO_LARGE: 413,
  CONTENT_TYPE_UNSUPPORTED: 415,
  INTERNAL: 500,
  SOURCE_UNREACHABLE: 502,
  SERVICE_UNAVAILABLE: 503,
  PROCESSING_TIMEOUT: 504,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

/** Body of every non-2xx engine answer. `message` is safe to show to API clients; `field` names the input. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  field?: string;
}

/** Body of POST /v1/jobs/<type>. */
export interface JobRequest {
  /** Client-chosen id (the task or request ULID): used for progress and abort. */
  job_id: string;
  source_url: string;
  /** Exactly the operation's params of decisions.md §4; the engine validates them too. */
  params?: Record<string, unknown>;
  /** Default 512 MiB; tasks send 4 GiB. */
  max_source_bytes?: number;
  /** Default 15 min. */
  timeout_ms?: number;
  /**
   * video.watermark and image.watermark with `params.text` (required there): the mark drawn by the Worker
   * (issue 17), a base64 PNG (absent when nothing is drawn) and the font size in px it was drawn at. The
   * engine overlays it as it overlays a logo and draws no text itself.
   */
  text_mark?: { png?: string; font_size: number };
}

export type MediaKind = "image" | "video" | "audio";

/** Body of POST /v1/fetch. */
export interface FetchRequest {
  source_url: string;
  /** The client's field named in refusals: source_url (default) or params.watermark_url. */
  field?: "source_url" | "params.watermark_url";
  /** Default 25 MiB. */
  max_source_bytes?: number;
  /** Default ["image"]. */
  accept?: MediaKind[];
  timeout_ms?: number;
}

/**
 * Body of POST /v1/resolve: 200 `{addresses: string[]}`, 400 naming `field` when refused, 502 when the name
 * does not resolve.
 */
export interface ResolveRequest {
  url: string;
  field: "source_url" | "params.watermark_url" | "webhook";
}

/** Header X-Engine-Media of a /v1/fetch answer. */
export interface FetchedMedia {
  kind: MediaKind;
  /** png | jpeg | webp for images */
  format: string;
  width?: number;
  height?: number;
}

/** Output container names used in `format`. */
export type OutputFormat =
  | "mp4"
  | "webm"
  | "mkv"
  | "jpeg"
  | "png"
  | "webp"
  | "mp3"
  | "m4a"
  | "wav"
  | "flac"
  | "opus"
  | "ogg"
  | "mka"
  | "3gp"
  | "aiff"
  | "caf";

/** Header X-Engine-Result of a file answer: decisions.md §5 result fields minus id/url/expires_at/type. */
export interface EngineResult {
  format: OutputFormat;
  size_bytes: number;
  width?: number;
  height?: number;
  /** seconds */
  duration?: number;
  /** seconds; fast trim reports the keyframe it actually started at */
  start?: number;
  end?: number;
  /**
   * audio.trim: the stream was copied (the window is the whole stream), not cut by re-encoding. video.trim:
   * the video was copied from a keyframe (`fast`; its audio is re-encoded to the same interval), not re-encoded.
   */
  copied?: boolean;
}

/** Body of a successful video.probe (interface.md's probe result minus id/type). */
export interface ProbeResult {
  codec: string;
  durationSec: number;
  /** Reduced fraction, e.g. "30000/1001". */
  fps: string;
  hasAlpha: boolean;
  width: number;
  height: number;
}

/** Body of GET /v1/jobs/<job_id>. */
export interface JobStatus {
  state: "queued" | "running";
  /** 0..1, from ffmpeg's -progress */
  progress: number;
}
