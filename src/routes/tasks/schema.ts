import { z } from "@hono/zod-openapi";
import { CursorQuery, LimitQuery } from "../../http/pagination";
import { OPERATION_TYPES } from "../../operations";
import { PIPELINE_TYPE } from "../../tasks/pipeline";
import { STEP_STATUSES } from "../../tasks/serialize";
import { ULID_PREFIX_PATTERN } from "../../util/ulid";

export const TASK_STATUSES = ["queued", "processing", "succeeded", "failed", "canceled"] as const;

const Timestamp = z.string().openapi({ format: "date-time", example: "2026-11-22T10:00:00.000Z" });

const OutputSchema = z
  .object({
    kind: z.string().openapi({ example: "video", description: "image | video | audio | json" }),
    url: z.string().openapi({ format: "uri", description: "Signed, expiring download URL." }),
    step: z
      .string()
      .optional()
      .openapi({ description: "Pipelines: the step that made it.", example: "clip" }),
  })
  .catchall(z.unknown())
  .openapi("TaskOutput", {
    description:
      "A produced file: its kind and URL, and the operation's result fields (format, size_bytes, …).",
  });

const TaskStepSchema = z
  .object({
    name: z.string().openapi({ example: "clip" }),
    type: z.enum(OPERATION_TYPES).openapi({ example: "video.trim" }),
    status: z.enum(STEP_STATUSES).openapi({
      description:
        "queued → running → succeeded | failed. Once the task has ended, a step that never started is skipped, and one still running when the task was canceled is canceled.",
    }),
    result: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({
        description:
          "null until it succeeded; then the operation's result fields, describing its own output (a trim's duration, a probe's durationSec).",
        example: {
          format: "mp4",
          size_bytes: 1_843_200,
          width: 1280,
          height: 720,
          duration: 10,
          start: 10,
          end: 20,
          copied: false,
        },
      }),
    error: z
      .object({ code: z.string(), message: z.string() })
      .nullable()
      .openapi({ description: "null unless this step failed (the task's error is then this one)." }),
    outputs: z
      .array(OutputSchema)
      .openapi({ description: "This step's outputs (also in the task's `outputs`)." }),
  })
  .openapi("TaskStep");

export const TaskSchema = z
  .object({
    id: z.string().openapi({ example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB", description: "ULID (26 characters)." }),
    status: z.enum(TASK_STATUSES).openapi({
      description:
        "queued → processing → succeeded | failed | canceled (queued → canceled too). Terminal statuses never change.",
    }),
    task_type: z
      .string()
      .openapi({ example: "video.trim", description: "<domain>.<operation>, or pipeline" }),
    source: z.string().openapi({ example: "api", description: '"api" for tasks created with an API key.' }),
    progress: z.number().min(0).max(1).openapi({ example: 0.42, description: "0–1; 1 once succeeded." }),
    created_at: Timestamp,
    started_at: Timestamp.nullable().openapi({ description: "null until processing starts." }),
    completed_at: Timestamp.nullable().openapi({ description: "null until the task ends." }),
    expires_at: Timestamp.openapi({
      description: "created_at + retention, reset to completed_at + retention when the task ends.",
    }),
    data_removed: z.boolean().openapi({ description: "true once the outputs were deleted after retention." }),
    error: z
      .object({ code: z.string(), message: z.string(), request_id: z.string() })
      .nullable()
      .openapi({ description: "null unless the task failed." }),
    outputs: z.array(OutputSchema).openapi({
      description:
        "[] until succeeded, and after retention. A pipeline's appear as its steps succeed, each with its `step`, and stay when a later step fails or the task is canceled.",
    }),
    steps: z.array(TaskStepSchema).nullable().openapi({
      description: "Pipelines: each step in order with its status, result and outputs; null for other tasks.",
    }),
    metrics: z
      .object({
        total_time: z
          .number()
          .openapi({ description: "completed_at − created_at in seconds; 0 until the task ends." }),
        queue_time: z.number().optional(),
        processing_time: z.number().optional(),
      })
      .openapi({ example: { total_time: 3.2, queue_time: 0.1, processing_time: 3.1 } }),
    urls: z.object({
      get: z.string().openapi({ format: "uri" }),
      cancel: z.string().openapi({ format: "uri" }),
    }),
  })
  .openapi("Task");

export const TaskIdParamSchema = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB" }),
});

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

/** ISO 8601 date (a whole UTC day) or datetime with a zone; returns the bound in ms. */
function dateBound(edge: "from" | "to") {
  return z
    .string()
    .refine((v) => DATE.test(v) || z.iso.datetime({ offset: true }).safeParse(v).success, {
      message: "Must be an ISO 8601 date (2026-11-22) or datetime with a zone (2026-11-22T10:00:00Z).",
    })
    .transform((v, ctx) => {
      const ms = Date.parse(DATE.test(v) ? `${v}T00:00:00Z` : v);
      if (Number.isNaN(ms)) {
        ctx.addIssue({ code: "custom", message: "Not a valid calendar date." });
        return z.NEVER;
      }
      // A date as upper bound includes that whole day.
      return DATE.test(v) && edge === "to" ? ms + DAY_MS - 1 : ms;
    });
}

export const ListTasksQuerySchema = z.object({
  id: z
    .string()
    .transform((v) => v.toUpperCase())
    .pipe(z.string().regex(ULID_PREFIX_PATTERN, "Must be a prefix of a ULID (Crockford base32)."))
    .optional()
    .openapi({ description: "Prefix search on the task id.", example: "01JD5Z" }),
  status: z.enum(TASK_STATUSES).optional().openapi({ description: "Filter by status." }),
  type: z
    .enum([...OPERATION_TYPES, PIPELINE_TYPE])
    .optional()
    .openapi({ description: "Filter by task type.", example: "video.trim" }),
  created_from: dateBound("from")
    .optional()
    .openapi({ description: "Lower bound (inclusive): ISO 8601 date or datetime.", example: "2026-11-01" }),
  created_to: dateBound("to").optional().openapi({
    description: "Upper bound (inclusive; a date includes the whole UTC day): ISO 8601 date or datetime.",
    example: "2026-11-22T23:59:59Z",
  }),
  cursor: CursorQuery,
  limit: LimitQuery,
});

export const TaskListSchema = z
  .object({
    has_next: z.boolean(),
    next_cursor: z.string().openapi({ description: 'Cursor of the next page; "" when there is none.' }),
    results: z.array(TaskSchema),
  })
  .openapi("TaskList");
