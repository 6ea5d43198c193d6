/**
 * The Worker's view of the media engine (containers/ffmpeg, protocol v1; wire format in
 * containers/ffmpeg/README.md). The engine keeps its own copy of these shapes in
 * containers/ffmpeg/src/protocol.ts; containers/ffmpeg/test/protocol.test.ts fails when the two drift.
 */

export const ENGINE_PROTOCOL_VERSION = 1;

/**
 * Operations the engine runs (decisions.md §1): everything but image.watermark, which the Worker runs itself
 * up to 2.2 megapixels and hands to the engine above that (src/operations/image-watermark.ts).
 */
export const ENGINE_JOB_TYPES = [
  "video.watermark",
  "video.extract-cover",
  "video.trim",
  "audio.trim",
  "video.extract-audio",
  "video.probe",
  "image.watermark",
] as const;
export type EngineJobType = (typeof ENGINE_JOB_TYPES)[number];

/** A job's priority: "low" for tasks, which wait behind synchronous calls (X-Engine-Priority on the wire). */
export type Priority = "low" | "normal";

/** Public error codes the engine answers with; each maps 1:1 onto interface.md's error table. */
export const ENGINE_ERROR_STATUS = {
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
export type EngineErrorCode = keyof typeof ENGINE_ERROR_STATUS;

/** Body of every non-2xx engine answer. `message` is safe to show to API clients; `field` names the input. */
export interface EngineErrorBody {
  code: EngineErrorCode;
  message: string;
  field?: string;
}

/** POST /v1/jobs/<type> */
export interface EngineJobRequest {
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

/** POST /v1/fetch */
export interface EngineFetchRequest {
  source_url: string;
  /** The client's field named in refusals: source_url (default) or params.watermark_url. */
  field?: "source_url" | "params.watermark_url";
  /** Default 25 MiB. */
  max_source_bytes?: number;
  /** Default ["image"]. */
  accept?: ("image" | "video" | "audio")[];
  timeout_ms?: number;
}

/** POST /v1/resolve: 200 `{addresses}`, 400 naming `field` when refused, 502 when the name does not resolve. */
export interface EngineResolveRequest {
  url: string;
  field: "source_url" | "params.watermark_url" | "webhook";
}

/** Header X-Engine-Media of a /v1/fetch answer. */
export interface EngineFetchedMedia {
  kind: "image" | "video" | "audio";
  /** png | jpeg | webp for images */
  format: string;
  width?: number;
  height?: number;
}

export type EngineOutputFormat =
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

/** Header X-Engine-Result of a file answer: decisions.md §5 result fields minus id/url/expires_at/type. */
export interface EngineResult {
  format: EngineOutputFormat;
  size_bytes: number;
  width?: number;
  height?: number;
  /** seconds */
  duration?: number;
  /** seconds; fast trim reports the keyframe it actually started at */
  start?: number;
  end?: number;
  /**
   * audio.trim: true when the window was stream-copied, false when it was re-encoded to cut exactly.
   * video.trim: true when the video was stream-copied from a keyframe (fast), false when it was re-encoded.
   */
  copied?: boolean;
}

/** Body of a video.probe answer (interface.md's probe result minus id/type). */
export interface EngineProbeResult {
  codec: string;
  durationSec: number;
  /** Reduced fraction, e.g. "30000/1001". */
  fps: string;
  hasAlpha: boolean;
  width: number;
  height: number;
}

/** GET /v1/jobs/<job_id> */
export interface EngineJobStatus {
  state: "queued" | "running";
  /** 0..1, from ffmpeg's -progress */
  progress: number;
}

/**
 * The media engine as the Worker uses it, whichever way it is reached (ENGINE_URL in development and
 * tests, the Container binding in production).
 *
 * `run` and `fetchSource` resolve with the engine's raw Response: on 200 its body is the produced file
 * (stream it to R2, never buffer it) or, for video.probe, JSON; otherwise use `readEngineError`. Aborting
 * `signal` disconnects, which makes the engine kill the job.
 */
export interface MediaEngine {
  run(type: EngineJobType, body: EngineJobRequest, signal?: AbortSignal): Promise<Response>;
  fetchSource(body: EngineFetchRequest, signal?: AbortSignal): Promise<Response>;
  /** Resolves a URL's host and applies the engine's address policy (webhooks, task sources at creation). */
  resolve(body: EngineResolveRequest, signal?: AbortSignal): Promise<Response>;
  /** Progress of a live job (0..1), or null when the engine does not know it (finished or never seen). */
  progress(jobId: string): Promise<number | null>;
  /** Kills a live job; resolves quietly when it is already gone. */
  abort(jobId: string): Promise<void>;
}
