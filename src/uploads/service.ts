import { ulid } from "ulid";
import type { Config } from "../config/config";
import { createDb } from "../db/client";
import { ApiError } from "../errors/api-error";
import { isUlid } from "../util/ulid";
import { directPath, newDirectToken, parseDirectToken } from "./direct";
import type { Actor, Result, UploadRecord } from "./record";
import { listLiveUploads } from "./store";
import type { ChecksumAlgorithm } from "./tus";
import { serializeCompleteRow, serializeUpload, type UploadView } from "./view";

/**
 * Uploads (tus 1.0.0 at /v1/uploads and the direct upload URLs; docs/decisions.md "Uploads"): what the routes
 * call. Every rule that needs the upload's state runs in its Durable Object (upload-object.ts); this module
 * names the object, says who is asking (an API key, or a direct URL's secret), turns the object's answers into
 * ApiErrors and keeps account boundaries: another account's upload is answered exactly as an unknown one (404).
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

/** An upload and who asks about it: an API key's account, or a direct URL's bearer. */
export type Target = { id: string; actor: Actor };

/** The upload `id` of the key's account; an id not shaped like ours is unknown without asking any object. */
export function keyTarget(principal: { accountId: string; scopes: ReadonlySet<string> }, id: string): Target {
  if (!isUlid(id)) throw new ApiError("RESOURCE_NOT_FOUND", NOT_FOUND);
  return { id, actor: { kind: "key", accountId: principal.accountId, write: principal.scopes.has("write") } };
}

/** The upload a direct URL's token opens; `origin` is the request's Origin header (null without one). */
export async function directTarget(token: string, origin: string | null): Promise<Target> {
  const parsed = await parseDirectToken(token);
  if (!parsed) throw new ApiError("RESOURCE_NOT_FOUND", NOT_FOUND);
  return { id: parsed.id, actor: { kind: "direct", secretHash: parsed.secretHash, origin } };
}

export type NewUpload = {
  length: number;
  filename: string | null;
  /** The Upload-Metadata header as sent, echoed on HEAD. */
  metadata: string | null;
};

function checkMaxLength(config: Config, length: number) {
  if (length > config.uploadMaxBytes)
    throw new ApiError(
      "REQUEST_BODY_TOO_LARGE",
      `Upload-Length ${length} exceeds the maximum upload size of ${config.uploadMaxBytes} bytes.`,
    );
}

/** POST /v1/uploads (creation): 413 past the configured maximum, 403 past a quota, before anything is stored. */
export async function createUpload(
  ctx: UploadsContext,
  accountId: string,
  input: NewUpload,
  now: number,
): Promise<UploadRecord> {
  checkMaxLength(ctx.config, input.length);
  const id = ulid(now);
  return unwrap(
    await objectOf(ctx.env, id).create({
      id,
      accountId,
      ...input,
      now,
      expiryMs: ctx.config.uploadExpiryMs,
      retentionMs: ctx.config.uploadRetentionMs,
      limits: ctx.config.uploadQuota,
    }),
  );
}

export type DirectGrantInput = {
  accountId: string;
  /** Already checked: the origin in the form browsers send it (direct.ts parseCorsOrigin). */
  corsOrigin: string;
  maxSize: number | null;
  /** Already checked by the webhook address rules. */
  webhook: string | null;
};

/**
 * POST /v1/uploads/direct: a one-time tus endpoint for a browser on `corsOrigin`, and the id its upload will
 * have. The URL's secret is returned once and only its hash is kept.
 */
export async function grantDirectUpload(
  ctx: UploadsContext,
  input: DirectGrantInput,
  apiOrigin: string,
  now: number,
) {
  const id = ulid(now);
  const { token, secretHash } = await newDirectToken(id);
  const urlExpiresAt = now + ctx.config.uploadDirectExpiryMs;
  unwrap(
    await objectOf(ctx.env, id).grant({
      id,
      accountId: input.accountId,
      grant: {
        secretHash,
        corsOrigin: input.corsOrigin,
        maxSize: input.maxSize,
        webhook: input.webhook,
        urlExpiresAt,
      },
      now,
      retentionMs: ctx.config.uploadRetentionMs,
      limits: ctx.config.uploadQuota,
    }),
  );
  return { id, url: `${apiOrigin}${directPath(token)}`, expires_at: new Date(urlExpiresAt).toISOString() };
}

/** The creation POST through a direct URL (no key): once, before the URL expires, within its max_size. */
export async function createDirectUpload(ctx: UploadsContext, target: Target, input: NewUpload, now: number) {
  return unwrap(
    await objectOf(ctx.env, target.id).createDirect(target.actor, {
      ...input,
      now,
      expiryMs: ctx.config.uploadExpiryMs,
      maxBytes: ctx.config.uploadMaxBytes,
      limits: ctx.config.uploadQuota,
    }),
  );
}

/** What a direct URL's preflight may allow: its cors_origin and max_size when the secret matches, else null. */
export async function directUrlInfo(env: Env, target: Target, now: number) {
  if (target.actor.kind !== "direct") return null;
  return objectOf(env, target.id).directInfo(target.actor.secretHash, now);
}

/**
 * The upload's state (GET, HEAD). `settle` (HEAD): a PATCH in progress is stopped and committed first, so the
 * offset is where to resume — only for an actor that may write (docs/decisions.md: a read-only key only looks).
 */
export async function uploadStatus(env: Env, target: Target, now: number, settle = false) {
  return unwrap(await objectOf(env, target.id).status(target.actor, now, settle));
}

/** A complete-or-not upload of the key's account, as a source (src/uploads/source.ts): read only. */
export async function readUpload(env: Env, accountId: string, id: string, now: number) {
  const target = keyTarget({ accountId, scopes: new Set() }, id);
  return uploadStatus(env, target, now);
}

export type PatchInput = {
  offset: number;
  contentLength: number | null;
  checksum: { algorithm: ChecksumAlgorithm; digest: Uint8Array } | null;
};

/** PATCH (and creation-with-upload): the bytes appended at `offset`; the upload as it stands after. */
export async function writeUpload(
  env: Env,
  target: Target,
  input: PatchInput,
  body: ReadableStream<Uint8Array> | null,
  now: number,
) {
  return unwrap(await objectOf(env, target.id).write(target.actor, { ...input, now }, body));
}

export async function deleteUpload(env: Env, target: Target, now: number) {
  unwrap(await objectOf(env, target.id).terminate(target.actor, now));
}

/**
 * GET /v1/uploads: a page of the account's live uploads, newest first. Complete ones come from their D1 rows;
 * pending and uploading ones from their objects (the live offset), skipping one that ended in between.
 */
export async function listAccountUploads(
  env: Env,
  accountId: string,
  page: { beforeId?: string | undefined; limit: number },
  now: number,
) {
  const { rows, hasNext } = await listLiveUploads(createDb(env.DB), accountId, page, now);
  const views = await Promise.all(
    rows.map(async (row): Promise<UploadView | null> => {
      if (row.state === "complete") return serializeCompleteRow(row);
      const result = await objectOf(env, row.id).status({ kind: "key", accountId, write: false }, now);
      return result.ok ? serializeUpload(result.value) : null;
    }),
  );
  return { rows, hasNext, results: views.filter((view) => view !== null) };
}
