import { digestsEqual } from "../auth/token";

/**
 * An upload's state as its Durable Object keeps it (upload-object.ts), and who may act on it. No Hono, no
 * storage: the rules that read only the record.
 */

/**
 * pending: a direct upload URL was issued (POST /v1/uploads/direct) and its browser has not created the
 * upload yet; uploading: created, bytes arriving; complete: every byte stored in R2; expired, deleted: gone.
 */
export type UploadState = "pending" | "uploading" | "complete" | "expired" | "deleted";

/** What a direct upload URL allows (POST /v1/uploads/direct; docs/decisions.md "Direct uploads"). */
export type DirectGrant = {
  /** sha256 (hex) of the URL's secret: the secret itself is never stored. */
  secretHash: string;
  /** The one browser origin the URL answers CORS for. */
  corsOrigin: string;
  /** The largest Upload-Length the URL accepts (else the deployment's maximum). */
  maxSize: number | null;
  /** Where upload.completed goes, if anywhere. */
  webhook: string | null;
  /** The URL can create its upload until then (its expires_at). */
  urlExpiresAt: number;
};

/** One upload's state, kept in its object's storage: the single point of truth under concurrent PATCHes. */
export type UploadRecord = {
  id: string;
  accountId: string;
  /** Upload-Length; 0 while pending. */
  length: number;
  /**
   * Bytes received and kept. The invariant of part-writer.ts: the parts below ⌊offset / partSize⌋ are in R2,
   * the `offset mod partSize` bytes after them in this object's storage.
   */
  offset: number;
  partSize: number;
  r2Key: string;
  multipartId: string;
  state: UploadState;
  filename: string | null;
  metadata: string | null;
  mediaType: string | null;
  createdAt: number;
  completedAt: number | null;
  /**
   * Pending: when the direct URL expires. Uploading: when the incomplete upload expires (creation + expiry).
   * Complete: when it is deleted (completion + retention).
   */
  expiresAt: number;
  retentionMs: number;
  direct: DirectGrant | null;
};

export type FailureCode =
  | "RESOURCE_NOT_FOUND"
  | "RESOURCE_GONE"
  | "RESOURCE_CONFLICT"
  | "REQUEST_BODY_TOO_LARGE"
  | "CHECKSUM_MISMATCH"
  | "PERMISSION_FORBIDDEN"
  | "UPLOAD_QUOTA_EXCEEDED"
  | "INTERNAL";

export type Failure = { ok: false; code: FailureCode; detail: string };
export type Result<T> = { ok: true; value: T } | Failure;

export const fail = (code: FailureCode, detail: string): Failure => ({ ok: false, code, detail });
export const ok = <T>(value: T): Result<T> => ({ ok: true, value });

export const notFound: Failure = fail("RESOURCE_NOT_FOUND", "The upload does not exist.");

/**
 * Who is asking. An API key acts on its account's uploads, and may stop a PATCH in progress (HEAD's settle)
 * only with the write scope. A direct upload URL's bearer acts on that one upload, by its secret; `origin` is
 * the request's Origin header, refused when it is another than the URL's.
 */
export type Actor =
  | { kind: "key"; accountId: string; write: boolean }
  | { kind: "direct"; secretHash: string; origin: string | null };

/**
 * Unknown, another account's, a wrong secret or deleted: the same 404, so nothing tells that an upload exists.
 * Expired: 410. A direct URL answers only its own origin (403 for another: a browser never reads it).
 */
export function checkAccess(record: UploadRecord | undefined, actor: Actor, now: number): Failure | null {
  if (!record || record.state === "deleted") return notFound;
  if (actor.kind === "key" && record.accountId !== actor.accountId) return notFound;
  if (actor.kind === "direct") {
    if (!record.direct || !digestsEqual(record.direct.secretHash, actor.secretHash)) return notFound;
    if (actor.origin !== null && actor.origin !== record.direct.corsOrigin)
      return fail("PERMISSION_FORBIDDEN", "This direct upload URL is not for this origin.");
  }
  if (record.state === "expired" || now >= record.expiresAt)
    return fail(
      "RESOURCE_GONE",
      record.state === "pending"
        ? "The direct upload URL has expired."
        : "The upload has expired; its bytes were discarded.",
    );
  return null;
}

/** Whether the actor may stop a PATCH in progress to read a settled offset (HEAD). */
export const maySettle = (actor: Actor) => actor.kind === "direct" || actor.write;
