/**
 * The engine's internal protocol, version 1: job types, result shapes and the typed error model.
 * README.md describes the wire format; src/engine/types.ts is the Worker's copy of these shapes and a
 * test (test/protocol.test.ts) keeps the two in step.
 */

export const PROTOCOL_VERSION = 1;

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

export function isJobType(value: string): value is JobType {
  return (JOB_TYPES as readonly string[]).includes(value);
}

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

/** Error body of every non-2xx answer. `message` is safe to show to API clients. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  field?: string;
}

/**
 * An error with a public code and a public message. `internal` carries what only the engine log may
 * see (ffmpeg stderr, addresses, paths); it never reaches a response.
 */
export class EngineError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly internal: string | undefined;

  constructor(code: ErrorCode, message: string, options: { field?: string; internal?: string } = {}) {
    super(message);
    this.name = "EngineError";
    this.code = code;
    this.field = options.field;
    this.internal = options.internal;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  toBody(): ErrorBody {
    return this.field === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, field: this.field };
  }
}

export const invalid = (field: string, message: string): EngineError =>
  new EngineError("VALIDATION_INVALID_ARGUMENT", message, { field });

export const unsupported = (message: string, internal?: string): EngineError =>
  new EngineError("CONTENT_TYPE_UNSUPPORTED", message, internal === undefined ? {} : { internal });

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
  | "mka";

/** Metadata of a produced file (header X-Engine-Result), per decisions.md §5 minus id/url/expires_at/type. */
export interface EngineResult {
  format: OutputFormat;
  size_bytes: number;
  width?: number;
  height?: number;
  duration?: number;
  start?: number;
  end?: number;
  /**
   * audio.trim: the stream was copied (the window is the whole stream), not cut by re-encoding. video.trim:
   * the video was copied from a keyframe (`fast`; its audio is re-encoded to the same interval), not re-encoded.
   */
  copied?: boolean;
}

/** Body of a successful video.probe (exactly interface.md's fields). */
export interface ProbeResult {
  codec: string;
  durationSec: number;
  fps: string;
  hasAlpha: boolean;
  width: number;
  height: number;
}

/** Body of POST /v1/jobs/<type>. */
export interface JobRequest {
  job_id: string;
  source_url: string;
  params?: Record<string, unknown>;
  max_source_bytes?: number;
  timeout_ms?: number;
  /**
   * video.watermark and image.watermark with `params.text` (required there): the mark drawn by the Worker
   * (issue 17), a base64 PNG (absent when nothing is drawn) and the font size in px it was drawn at. The
   * engine overlays it as it overlays a logo and draws no text itself.
   */
  text_mark?: { png?: string; font_size: number };
}

/** Body of POST /v1/fetch. */
export interface FetchRequest {
  source_url: string;
  /** The client's field named in refusals (default source_url). */
  field?: "source_url" | "params.watermark_url";
  max_source_bytes?: number;
  accept?: MediaKind[];
}

/** Body of POST /v1/resolve; the answer is `{addresses: string[]}`. */
export interface ResolveRequest {
  url: string;
  field: "source_url" | "params.watermark_url" | "webhook";
}

export type MediaKind = "image" | "video" | "audio";

/** Header X-Engine-Media of a /v1/fetch answer. */
export interface FetchedMedia {
  kind: MediaKind;
  format: string;
  width?: number;
  height?: number;
}

/** Body of GET /v1/jobs/<job_id>. */
export interface JobStatus {
  state: "queued" | "running";
  progress: number;
}
