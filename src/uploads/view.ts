import type { UploadRow } from "../db/schema";
import type { UploadRecord } from "./record";

/** The states an upload is shown in: expired and deleted ones answer 410 and 404 instead. */
export type VisibleState = "pending" | "uploading" | "complete";

/**
 * The public JSON shape of an upload (GET /v1/uploads/{id}, the list, the upload.completed webhook body):
 * routes/uploads/schema.ts documents it as UploadSchema.
 */
export function serializeUpload(record: UploadRecord) {
  return {
    id: record.id,
    state: record.state as VisibleState,
    size_bytes: record.state === "pending" ? null : record.length,
    offset: record.offset,
    media_type: record.mediaType,
    filename: record.filename,
    created_at: new Date(record.createdAt).toISOString(),
    completed_at: record.completedAt === null ? null : new Date(record.completedAt).toISOString(),
    expires_at: new Date(record.expiresAt).toISOString(),
  };
}

export type UploadView = ReturnType<typeof serializeUpload>;

/**
 * A complete upload's view from its D1 row, which holds all of it once complete (the list reads those rows
 * instead of asking each upload's object; incomplete ones are asked, for their live offset).
 */
export function serializeCompleteRow(row: UploadRow): UploadView {
  return {
    id: row.id,
    state: "complete",
    size_bytes: row.sizeBytes,
    offset: row.sizeBytes,
    media_type: row.mediaType,
    filename: row.filename,
    created_at: new Date(row.createdAt).toISOString(),
    completed_at: row.completedAt === null ? null : new Date(row.completedAt).toISOString(),
    expires_at: new Date(row.expiresAt).toISOString(),
  };
}
