import { z } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { ApiError } from "../../errors/api-error";
import type { AppEnv } from "../../http/context";
import { checkTusResumable, httpDate, type TusFailure } from "../../uploads/tus";
import type { UploadRecord } from "../../uploads/upload-object";

export const UploadIdParam = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB" }),
});

const Iso = z.string().openapi({ format: "date-time" });

export const UploadSchema = z
  .object({
    id: z.string().openapi({ example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB" }),
    state: z.enum(["uploading", "complete"]).openapi({
      description: "uploading until every byte of Upload-Length arrived, then complete (usable as a source).",
    }),
    size_bytes: z
      .number()
      .int()
      .openapi({ description: "Upload-Length: the file's size.", example: 314572800 }),
    offset: z.number().int().openapi({ description: "Bytes received so far (= size_bytes when complete)." }),
    media_type: z.string().nullable().openapi({
      description:
        "Sniffed from the bytes once complete (never the client's claim); application/octet-stream for media the service does not read; null while uploading.",
      example: "video/mp4",
    }),
    filename: z.string().nullable().openapi({ description: "Upload-Metadata `filename`, when sent." }),
    created_at: Iso,
    completed_at: Iso.nullable(),
    expires_at: Iso.openapi({
      description:
        "Uploading: when the incomplete upload expires (its bytes discarded, then 410). Complete: when it is deleted (then 410).",
    }),
  })
  .openapi("Upload");

/** Header parameters of the tus requests, documented; the handlers check them (412, 400, 415 by tus rules). */
export const tusResumable = z
  .string()
  .optional()
  .openapi({
    param: { name: "Tus-Resumable", in: "header" },
    description: "Required: `1.0.0` (412 when missing or another version).",
    example: "1.0.0",
  });

const text = (description: string, example: string) => ({
  description,
  schema: { type: "string" as const, example },
});
export const TUS_HEADERS = {
  "Tus-Resumable": text("Always `1.0.0`.", "1.0.0"),
  "Upload-Offset": text("Bytes received and kept so far.", "125829120"),
  "Upload-Length": text("The file's declared size.", "314572800"),
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
