import { digestsEqual } from "../auth/token";
import type { Config } from "../config/config";
import { ApiError } from "../errors/api-error";
import { hmacHex } from "../files/signing";
import { readUpload } from "./service";

/**
 * Uploads as sources (docs/decisions.md "Uploads as sources"). A request names a complete upload of its own
 * account (`source_upload_id`, `params.watermark_upload_id`); the media engine then fetches it like any source,
 * from a short-lived URL of this Worker signed with FILE_SIGNING_SECRET (GET /upload-sources/{id}), so the
 * engine's fetcher, size limits, range reads and sniffing apply unchanged and the upload is never public.
 */

export type UploadField = "source_upload_id" | "params.watermark_upload_id";

/** How a task row stores a source that is an upload (tasks.source_url): never an http(s) URL. */
export const UPLOAD_SOURCE_PREFIX = "upload:";

/** A signed source URL outlives the job that fetches it by this much (the engine's own queue, retries). */
const URL_MARGIN_MS = 5 * 60_000;

function withField(error: unknown, field: UploadField, id: string): never {
  if (!(error instanceof ApiError)) throw error;
  const detail =
    error.code === "RESOURCE_NOT_FOUND"
      ? `${field} ${id} names no upload of this account.`
      : error.code === "RESOURCE_GONE"
        ? `${field} ${id} has expired.`
        : error.detail;
  throw new ApiError(error.code, detail, { errors: [{ code: "upload", field, message: detail }] });
}

/**
 * The upload `id` as a source: the account's own (404 otherwise, as for an unknown id), not expired (410),
 * and complete (409 naming the field).
 */
export async function requireCompleteUpload(
  env: Env,
  accountId: string,
  id: string,
  field: UploadField,
  now: number,
) {
  const record = await readUpload(env, accountId, id, now).catch((error) => withField(error, field, id));
  if (record.state !== "complete") {
    const detail = `${field} ${id} is not complete: ${record.offset} of ${record.length} bytes arrived. Finish the upload first.`;
    throw new ApiError("RESOURCE_CONFLICT", detail, {
      errors: [{ code: "upload_incomplete", field, message: detail }],
    });
  }
  return record;
}

export type SourceRefs = { sourceUploadId?: string | undefined; watermarkUploadId?: string | undefined };

/** At request time, before credits or capacity: each named upload usable (404 / 410 / 409 naming the field). */
export async function checkUploadSources(env: Env, accountId: string, refs: SourceRefs, now: number) {
  if (refs.sourceUploadId)
    await requireCompleteUpload(env, accountId, refs.sourceUploadId, "source_upload_id", now);
  if (refs.watermarkUploadId)
    await requireCompleteUpload(env, accountId, refs.watermarkUploadId, "params.watermark_upload_id", now);
}

const message = (id: string, expires: number) => `upload-source:${id}:${expires}`;

export async function signUploadSourceUrl(origin: string, secret: string, id: string, expiresAtMs: number) {
  const expires = Math.floor(expiresAtMs / 1000);
  return `${origin}/upload-sources/${id}?expires=${expires}&signature=${await hmacHex(secret, message(id, expires))}`;
}

export async function verifyUploadSourceSignature(
  secret: string,
  id: string,
  expires: number,
  presented: string,
) {
  return digestsEqual(await hmacHex(secret, message(id, expires)), presented.toLowerCase());
}

export type MaterializeInput = {
  accountId: string;
  origin: string;
  /** An http(s) URL, or `upload:<id>` (a task's stored source). */
  sourceUrl: string;
  /** The operation's params; a `watermark_upload_id` becomes `watermark_url`. */
  params: unknown;
  /** How long the job may run: the signed URLs live this long plus a margin. */
  jobMs: number;
  now: number;
};

/**
 * At run time: every upload the job names, checked again (it may have been deleted since the task was
 * created) and replaced by a signed URL the engine fetches. Sources that are URLs pass unchanged.
 */
export async function materializeSources(env: Env, config: Config, input: MaterializeInput) {
  const expiresAt = input.now + input.jobMs + URL_MARGIN_MS;
  const sign = async (id: string, field: UploadField) => {
    await requireCompleteUpload(env, input.accountId, id, field, input.now);
    if (!config.fileSigningSecret) throw new Error("FILE_SIGNING_SECRET is not configured");
    return signUploadSourceUrl(input.origin, config.fileSigningSecret, id, expiresAt);
  };
  const sourceUrl = input.sourceUrl.startsWith(UPLOAD_SOURCE_PREFIX)
    ? await sign(input.sourceUrl.slice(UPLOAD_SOURCE_PREFIX.length), "source_upload_id")
    : input.sourceUrl;
  let params = input.params;
  const { watermark_upload_id, ...rest } = (params ?? {}) as { watermark_upload_id?: string };
  if (watermark_upload_id !== undefined) {
    params = { ...rest, watermark_url: await sign(watermark_upload_id, "params.watermark_upload_id") };
  }
  return { sourceUrl, params };
}
