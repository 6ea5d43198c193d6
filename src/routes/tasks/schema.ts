import { z } from "@hono/zod-openapi";
import { CursorQuery, LimitQuery } from "../../http/pagination";
import { OPERATION_TYPES } from "../../operations";
import { ULID_PREFIX_PATTERN } from "../../util/ulid";

export const TASK_STATUSES = ["queued", "processing", "succeeded", "failed", "canceled"] as const;

const Timestamp = z.string().openapi({ format: "date-time", example: "2026-11-22T10:00:00.000Z" });

export const TaskSchema = z
  .object({
    id: z.string().openapi({ example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB", description: "ULID (26 characters)." }),
    status: z.enum(TASK_STATUSES).openapi({
      description:
        "queued → processing → succeeded | failed | canceled (queued → canceled too). Terminal statuses never change.",
    }),
    task_type: z.string().openapi({ example: "video.trim", description: "<domain>.<operation>" }),
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
    outputs: z
      .array(
        z
          .object({
            kind: z.string().openapi({ example: "video", description: "image | video | audio | json" }),
            url: z.string().openapi({ format: "uri", description: "Signed, expiring download URL." }),
          })
          .catchall(z.unknown()),
      )
      .openapi({ description: "[] until succeeded, and after retention." }),
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
    .enum(OPERATION_TYPES as [string, ...string[]])
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
