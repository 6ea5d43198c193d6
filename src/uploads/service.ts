import { ulid } from "ulid";
import type { Config } from "../config/config";
import { ApiError } from "../errors/api-error";
import { isUlid } from "../util/ulid";
import type { Result, UploadRecord } from "./upload-object";

/**
 * Uploads (tus 1.0.0 at /v1/uploads; docs/decisions.md "Uploads"): what the routes call. Every rule that needs
 * the upload's state runs in its Durable Object (upload-object.ts); this module names the object, turns its
 * answers into ApiErrors and keeps account boundaries: another account's upload is answered exactly as an
 * unknown one (404).
 */

export type UploadsContext = { env: Env; config: Config };

const NOT_FOUND = "The upload does not exist.";

function objectOf(env: Env, id: string) {
  return env.UPLOADS.get(env.UPLOADS.idFromName(id));
}

function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw new ApiError(result.code, result.detail);
}

/** The object of an id shaped like ours; anything else is unknown without creating an object for it. */
function existingObject(env: Env, id: string) {
  if (!isUlid(id)) throw new ApiError("RESOURCE_NOT_FOUND", NOT_FOUND);
  return objectOf(env, id);
}

export type NewUpload = {
  accountId: string;
  length: number;
  filename: string | null;
  /** The Upload-Metadata header as sent, echoed on HEAD. */
  metadata: string | null;
};

/** POST /v1/uploads (creation): 413 past the configured maximum, before anything is stored. */
export async function createUpload(
  ctx: UploadsContext,
  input: NewUpload,
  now: number,
): Promise<UploadRecord> {
  if (input.length > ctx.config.uploadMaxBytes) {
    throw new ApiError(
      "REQUEST_BODY_TOO_LARGE",
      `Upload-Length ${input.length} exceeds the maximum upload size of ${ctx.config.uploadMaxBytes} bytes.`,
    );
  }
  const id = ulid(now);
  return objectOf(ctx.env, id).create({
    id,
    accountId: input.accountId,
    length: input.length,
    filename: input.filename,
    metadata: input.metadata,
    now,
    expiryMs: ctx.config.uploadExpiryMs,
    retentionMs: ctx.config.uploadRetentionMs,
  });
}

/** `settle` (HEAD): a PATCH in progress is stopped and committed first, so the offset is where to resume. */
export async function readUpload(env: Env, accountId: string, id: string, now: number, settle = false) {
  return unwrap(await existingObject(env, id).status(accountId, now, settle));
}

export type PatchInput = {
  accountId: string;
  id: string;
  offset: number;
  contentLength: number | null;
  checksum: Uint8Array | null;
};

/** PATCH (and creation-with-upload): the bytes appended at `offset`; the upload as it stands after. */
export async function writeUpload(
  env: Env,
  input: PatchInput,
  body: ReadableStream<Uint8Array> | null,
  now: number,
): Promise<UploadRecord> {
  const { id, ...write } = input;
  return unwrap(await existingObject(env, id).write({ ...write, now }, body));
}

export async function deleteUpload(env: Env, accountId: string, id: string, now: number) {
  unwrap(await existingObject(env, id).terminate(accountId, now));
}

/** The public JSON shape of an upload (GET /v1/uploads/{id}). */
export function serializeUpload(record: UploadRecord) {
  return {
    id: record.id,
    state: record.state as "uploading" | "complete",
    size_bytes: record.length,
    offset: record.offset,
    media_type: record.mediaType,
    filename: record.filename,
    created_at: new Date(record.createdAt).toISOString(),
    completed_at: record.completedAt === null ? null : new Date(record.completedAt).toISOString(),
    expires_at: new Date(record.expiresAt).toISOString(),
  };
}
