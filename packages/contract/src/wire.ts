/**
 * The media engine's wire format, version 1, as zod: every body and header that crosses between the Worker
 * (src/engine, the client) and the engine (containers/ffmpeg, the server). The engine validates requests with
 * these schemas (@hono/zod-validator); the Worker parses the engine's answers with them (no `JSON.parse(…) as`).
 * Limits are plain numbers here (the engine's security/limits.ts reads them), so the package imports nothing of
 * either side. containers/ffmpeg/README.md "Protocol" describes the routes.
 */
import {
  EngineResultSchema,
  OPERATION_TYPES,
  type OperationType,
  VideoProbeResultSchema,
} from "./operations/index.ts";
import { checkSteps, MAX_PIPELINE_STEPS, StepNameSchema } from "./operations/pipeline.ts";
import { z } from "./params/zod.ts";

export const PROTOCOL_VERSION = 1;

const MiB = 1024 * 1024;

/** The bounds of the wire format itself (the engine's other limits are its own, security/limits.ts). */
export const WIRE_LIMITS = {
  /** JSON request bodies: a pipeline's text marks (≤ 8 MiB each as PNG) in base64 fit. */
  maxRequestBodyBytes: 12 * MiB,
  /** The largest source cap a request may ask for (tasks send 4 GiB). */
  maxSourceBytes: 4 * 1024 * MiB,
  /** The longest time budget a request may ask for. */
  maxTimeoutMs: 60 * 60 * 1000,
  /** A text mark's PNG: a 4-megapixel mark (the Worker's MAX_MARK_PIXELS) compresses far below. */
  maxTextMarkBytes: 8 * MiB,
  /**
   * The largest text mark: four times the Worker's MAX_MARK_PIXELS, whose check is an estimate made before
   * drawing, so never in the way of a mark the Worker drew; a header claiming more is not one of ours.
   */
  maxTextMarkPixels: 16_000_000,
} as const;

/** Job types: every operation of the registry is an engine job of the same name. */
export const JOB_TYPES = OPERATION_TYPES;
export type JobType = OperationType;

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
const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** Body of every non-2xx engine answer. `message` is safe to show to API clients; `field` names the input. */
export const ErrorBodySchema = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  field: z.string().optional(),
});
export type ErrorBody = z.output<typeof ErrorBodySchema>;

/** An integer from 1 to `max`, or absent (the route's default). */
const bounded = (key: string, max: number) => {
  const message = `${key} must be an integer between 1 and ${max}`;
  return z.number({ error: message }).int(message).min(1, message).max(max, message).optional();
};

const JobIdSchema = z
  .string({ error: "job_id must be 1-64 characters of letters, digits, _ or -" })
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "job_id must be 1-64 characters of letters, digits, _ or -");

/** The fields of every request that fetches a source; the address policy is checked when it is fetched. */
const sourceFields = {
  source_url: z.string({ error: "source_url is required" }).min(1, "source_url is required"),
  /** Default 512 MiB for jobs, 25 MiB for /v1/fetch; tasks send 4 GiB. */
  max_source_bytes: bounded("max_source_bytes", WIRE_LIMITS.maxSourceBytes),
  /** Default 15 min for jobs, 60 s for /v1/fetch. */
  timeout_ms: bounded("timeout_ms", WIRE_LIMITS.maxTimeoutMs),
};

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The first bytes of a base64 string (enough for a PNG's signature and IHDR), or null when it is not base64. */
function base64Head(text: string, bytes: number): Uint8Array | null {
  try {
    const head = atob(text.slice(0, Math.ceil(bytes / 3) * 4));
    return Uint8Array.from(head, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/**
 * A text mark as the Worker drew it (issue 17): a base64 PNG (straight alpha, opacity applied, cropped to the
 * ink; absent when nothing is drawn) and the font size in px it was drawn at. The engine overlays it like a logo
 * and draws no text itself. Its header is checked here, before ffmpeg reads it.
 */
export const TextMarkSchema = z.strictObject({
  png: z
    .string()
    .max(Math.ceil(WIRE_LIMITS.maxTextMarkBytes / 3) * 4 + 4, "text_mark.png must be at most 8 MiB")
    .superRefine((png, ctx) => {
      const head = base64Head(png, 33);
      const view = head && head.length >= 33 ? new DataView(head.buffer) : null;
      const isPng =
        view !== null &&
        PNG_SIGNATURE.every((b, i) => head![i] === b) &&
        String.fromCharCode(...head!.subarray(12, 16)) === "IHDR";
      if (!isPng) return void ctx.addIssue({ code: "custom", message: "text_mark.png is not a PNG" });
      const [width, height] = [view.getUint32(16), view.getUint32(20)];
      if (width < 1 || height < 1 || width * height > WIRE_LIMITS.maxTextMarkPixels) {
        ctx.addIssue({
          code: "custom",
          message: `text_mark.png must be 1 to ${WIRE_LIMITS.maxTextMarkPixels / 1e6} megapixels`,
        });
      }
    })
    .optional(),
  font_size: z.number({ error: "text_mark.font_size must be 1-1000" }).min(1).max(1000),
});
export type TextMark = z.output<typeof TextMarkSchema>;

/** Body of POST /v1/jobs/<type>. Its params are validated by the type's schema (OPERATIONS[type].params). */
export const JobRequestSchema = z.strictObject({
  /** Client-chosen id (the task or request ULID): used for progress and abort. */
  job_id: JobIdSchema,
  ...sourceFields,
  /** Exactly the operation's params; absent or null is {}. */
  params: z.unknown().optional(),
  /** Watermarks with `params.text`: the mark drawn by the Worker (required there). */
  text_mark: TextMarkSchema.optional(),
});
export type JobRequest = z.input<typeof JobRequestSchema>;

export const MEDIA_KINDS = ["image", "video", "audio"] as const;

/** Body of POST /v1/fetch. */
export const FetchRequestSchema = z.strictObject({
  ...sourceFields,
  /** The client's field named in refusals: source_url (default) or params.watermark_url. */
  field: z.enum(["source_url", "params.watermark_url"]).optional(),
  /** Default ["image"]. */
  accept: z
    .array(z.enum(MEDIA_KINDS), { error: 'accept must list "image", "video" and/or "audio"' })
    .min(1, 'accept must list "image", "video" and/or "audio"')
    .optional(),
});
export type FetchRequest = z.input<typeof FetchRequestSchema>;

/** Header X-Engine-Media of a /v1/fetch answer: what the source is. */
export const FetchedMediaSchema = z.object({
  kind: z.enum(MEDIA_KINDS),
  /** png | jpeg | webp for images */
  format: z.string(),
  width: z.number().int().optional(),
  height: z.number().int().optional(),
});
export type FetchedMedia = z.output<typeof FetchedMediaSchema>;

/** The fields whose URL the Worker has the engine resolve: sources it will fetch (webhooks the Worker resolves itself). */
export const RESOLVE_FIELDS = ["source_url", "params.watermark_url"] as const;

/** Body of POST /v1/resolve: 200 ResolveAnswer, 400 naming `field` when refused, 502 when the name does not resolve. */
export const ResolveRequestSchema = z
  .strictObject({
    field: z.enum(RESOLVE_FIELDS, { error: `field must be one of ${RESOLVE_FIELDS.join(", ")}` }),
    // A URL that is missing or no string is refused naming the client's field (`field`), as every refusal does.
    url: z.unknown().optional(),
  })
  .superRefine((body, ctx) => {
    if (typeof body.url !== "string")
      ctx.addIssue({ code: "custom", path: [body.field], message: `${body.field} must be a string` });
  })
  .transform((body) => ({ field: body.field, url: body.url as string }));
export type ResolveRequest = z.output<typeof ResolveRequestSchema>;
export const ResolveAnswerSchema = z.object({ addresses: z.array(z.string()) });

export type { EngineResult, OutputFormat, ProbeResult } from "./operations/index.ts";
/** Header X-Engine-Result of a file answer: the operation's result fields (OPERATIONS[type].result). */
/** Body of a successful video.probe. */
export { EngineResultSchema, VideoProbeResultSchema as ProbeResultSchema };

/** Body of GET /v1/jobs/<job_id>. */
export const JobStatusSchema = z.object({
  state: z.enum(["queued", "running"]),
  /** 0..1, from ffmpeg's -progress (a pipeline: its steps' share done) */
  progress: z.number().min(0).max(1),
});
export type JobStatus = z.output<typeof JobStatusSchema>;

/** A JSON header value parsed by its schema; null when absent, a thrown ZodError when malformed. */
export function parseHeader<S extends z.ZodType>(schema: S, value: string | null): z.output<S> | null {
  if (value === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    json = undefined;
  }
  return schema.parse(json);
}

/** A step of POST /v1/pipelines: a public pipeline step, its params as given, and its text mark when it has one. */
export const PipelineStepRequestSchema = z.strictObject({
  name: StepNameSchema,
  type: z.enum(OPERATION_TYPES),
  use: StepNameSchema.optional(),
  params: z.record(z.string(), z.unknown()).optional(),
  text_mark: TextMarkSchema.optional(),
});

/**
 * Body of POST /v1/pipelines: several operations on one source in one job (docs/operations.md "Pipelines"). The
 * answer is NDJSON, one PipelineEvent a line; each step's file is then at GET /v1/pipelines/<job_id>/<step>.
 */
export const PipelineRequestSchema = z
  .strictObject({
    job_id: JobIdSchema,
    ...sourceFields,
    steps: z.array(PipelineStepRequestSchema).min(1).max(MAX_PIPELINE_STEPS),
  })
  .superRefine((p, ctx) => checkSteps(p.steps, ctx));
export type PipelineRequest = z.input<typeof PipelineRequestSchema>;

/**
 * One line of a pipeline's answer. `started` when a step starts; `succeeded` with its result (a file step's
 * X-Engine-Result fields, whose file the client GETs now; a probe's data); `failed` with its error, the last
 * line then; `done` the last line when every step succeeded. A stream that ends otherwise was cut (the engine
 * went away).
 */
export const PipelineEventSchema = z.discriminatedUnion("event", [
  z.object({ event: z.literal("started"), step: z.string() }),
  z.object({
    event: z.literal("succeeded"),
    step: z.string(),
    file: z.object({ content_type: z.string(), result: EngineResultSchema }).optional(),
    data: VideoProbeResultSchema.optional(),
  }),
  z.object({ event: z.literal("failed"), step: z.string(), error: ErrorBodySchema }),
  z.object({ event: z.literal("done") }),
]);
export type PipelineEvent = z.output<typeof PipelineEventSchema>;

/** The path of a pipeline step's file on the engine that ran the job. */
export const pipelineFilePath = (jobId: string, step: string) =>
  `/v1/pipelines/${encodeURIComponent(jobId)}/${encodeURIComponent(step)}`;
