import { z } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { ApiError } from "../../errors/api-error";
import type { AppEnv } from "../../http/context";
import type { UploadRecord } from "../../uploads/record";
import { checkTusResumable, httpDate, type TusFailure } from "../../uploads/tus";

export const UploadIdParam = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB" }),
});

const Iso = z.string().openapi({ format: "date-time" });

export const UploadSchema = z
  .object({
    id: z.string().openapi({ example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB" }),
    state: z.enum(["pending", "uploading", "complete"]).openapi({
      description:
        "pending: a direct upload URL was issued and its browser has not created the upload yet; uploading: until every byte of Upload-Length is stored; complete: usable as a source, its bytes readable at /content.",
    }),
    size_bytes: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Upload-Length: the file's size (null while pending).", example: 314572800 }),
    offset: z
      .number()
      .int()
      .openapi({ description: "Bytes received and kept so far (= size_bytes when complete)." }),
    media_type: z.string().nullable().openapi({
      description:
        "Sniffed from the bytes once complete (never the client's claim); application/octet-stream for media the service does not read; null until complete.",
      example: "video/mp4",
    }),
    filename: z
      .string()
      .nullable()
      .openapi({ description: "Upload-Metadata `filename` (any UTF-8, up to 255 characters), when sent." }),
    created_at: Iso,
    completed_at: Iso.nullable(),
    expires_at: Iso.openapi({
      description:
        "Pending: when the direct upload URL expires. Uploading: when the incomplete upload expires (its bytes discarded, then 410). Complete: when it is deleted (then 410).",
    }),
  })
  .openapi("Upload");

/**
 * A header the tus protocol requires, documented as required, but checked by the handler rather than by zod:
 * tus says how a missing one is answered (412 for Tus-Resumable, 400 naming the header for the others).
 */
export function requiredHeader(
  name: string,
  description: string,
  example: string,
  shape: { pattern?: string; enum?: string[] } = {},
) {
  return z
    .string()
    .optional()
    .openapi({ param: { name, in: "header", required: true }, description, example, ...shape });
}

/** A byte count or offset as tus sends it (src/uploads/tus.ts parses it): 1 to 16 decimal digits. */
export const BYTE_COUNT = { pattern: "^\\d{1,16}$" };

/** Header parameters of the tus requests, documented; the handlers check them (412, 400, 415 by tus rules). */
export const tusResumable = requiredHeader(
  "Tus-Resumable",
  "`1.0.0` (412 when missing or another version).",
  "1.0.0",
  { enum: ["1.0.0"] },
);

const text = (description: string, example: string, shape: { pattern?: string; enum?: string[] } = {}) => ({
  description,
  schema: { type: "string" as const, example, ...shape },
});
export const TUS_HEADERS = {
  "Tus-Resumable": text("Always `1.0.0`.", "1.0.0", { enum: ["1.0.0"] }),
  "Upload-Offset": text("Bytes received and kept so far.", "125829120", BYTE_COUNT),
  "Upload-Length": text("The file's declared size.", "314572800", BYTE_COUNT),
  "Upload-Expires": text(
    "While incomplete: when the upload expires (RFC 9110 date).",
    "Sat, 28 Nov 2026 09:00:00 GMT",
  ),
  Location: text("The new upload's URL.", "https://api.example.com/v1/uploads/01JD5Z8X4QK3M7R2T9V6W1Y0AB"),
  "Cache-Control": text("`no-store`.", "no-store"),
};

/** Every answer under /v1/uploads, errors included, says the tus version (tus core). */
export const tusResponseHeader = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.req.method !== "OPTIONS" || c.res.status < 300) c.res.headers.set("Tus-Resumable", "1.0.0");
});

export function requireTus(value: string | undefined) {
  const failure = checkTusResumable(value);
  if (failure) throw tusError(failure);
}

export function tusError(failure: TusFailure) {
  if (failure.field)
    return new ApiError(failure.code, failure.detail, {
      errors: [{ code: "invalid", field: failure.field, message: failure.detail }],
    });
  return new ApiError(failure.code, failure.detail);
}

/** Upload-Offset, and Upload-Expires while the upload is incomplete. */
export function offsetHeaders(record: UploadRecord): Record<string, string> {
  return {
    "Upload-Offset": String(record.offset),
    ...(record.state === "uploading" ? { "Upload-Expires": httpDate(record.expiresAt) } : {}),
  };
}

export const UploadListSchema = z
  .object({
    has_next: z.boolean(),
    next_cursor: z.string().openapi({ description: 'Cursor of the next page; "" when there is none.' }),
    results: z.array(UploadSchema),
  })
  .openapi("UploadList");
