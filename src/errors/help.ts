import type { ErrorCode } from "./codes";

/**
 * What each error means to a client, its usual causes and what to do: the text of the problem `type` pages
 * (RFC 9457 §3.1.1) and of the reference's error table. One entry per row of ERROR_CODES.
 */
export const ERROR_HELP: Record<ErrorCode, { meaning: string; causes: string[]; actions: string[] }> = {
  VALIDATION_INVALID_ARGUMENT: {
    meaning: "The request was understood but one or more arguments are invalid or missing.",
    causes: [
      "A required field is missing (for example source_url) or has the wrong type.",
      "A value is outside its allowed range, pattern or set (see the operation's schema).",
      "The body is not valid JSON (field `body`, code `invalid_json`).",
      "A synchronous operation was called without an Idempotency-Key header, or with one that is not 1–255 printable ASCII characters.",
      "A list query has a bad cursor, limit or date.",
    ],
    actions: [
      "Read the `errors` array: each item names the `field`, a machine `code` and a `message`.",
      "Fix the named fields and send the request again; retrying unchanged fails the same way.",
    ],
  },
  RESOURCE_GONE: {
    meaning:
      "The upload existed but has expired: its bytes were discarded and it can no longer be resumed or used.",
    causes: [
      "An upload was still incomplete when its Upload-Expires time (24 h after creation by default) passed.",
      "A complete upload was older than the retention time (7 days after its last byte by default).",
    ],
    actions: ["Create a new upload (POST /v1/uploads) and send the file again."],
  },
  UPLOAD_QUOTA_EXCEEDED: {
    meaning:
      "Creating this upload (or direct upload URL) would take the account past one of its upload quotas: nothing was created.",
    causes: [
      "The account already has as many incomplete uploads as it may have at once (20 by default), pending direct upload URLs included.",
      "The bytes the account stores in uploads (complete ones, plus the declared Upload-Length of incomplete ones) plus this Upload-Length would exceed its limit (50 GiB by default).",
    ],
    actions: [
      "Finish or delete (DELETE /v1/uploads/{id}) incomplete uploads, or delete complete uploads no longer needed; expired ones stop counting on their own.",
      "GET /v1/account shows the account's usage and limits.",
    ],
  },
  TUS_VERSION_UNSUPPORTED: {
    meaning: "An upload request did not say it speaks tus 1.0.0, the only version this service implements.",
    causes: ["The Tus-Resumable header is missing, or names another version than 1.0.0."],
    actions: [
      "Send `Tus-Resumable: 1.0.0` on every request to /v1/uploads but OPTIONS (tus clients such as tus-js-client do).",
    ],
  },
  CHECKSUM_MISMATCH: {
    meaning: "The bytes a PATCH carried do not match the checksum it declared: they were not kept.",
    causes: [
      "The body was altered or cut in transit.",
      "Upload-Checksum was computed over other bytes than the body (it covers this PATCH's body only, not the file).",
    ],
    actions: [
      "Send HEAD for the offset, then PATCH the same bytes again from there with their checksum (sha1 or sha256).",
    ],
  },
  RANGE_NOT_SATISFIABLE: {
    meaning: "A download asked for a byte range that lies wholly outside the file.",
    causes: [
      "The Range header starts at or past the end of the file (for example `bytes=5000-` on a 4,000-byte file).",
      "`bytes=-0`, or any range of an empty file.",
    ],
    actions: [
      "Read the file's size from the `Content-Range: bytes */<size>` header of this answer and ask for a range inside it.",
      "Send no Range header to download the whole file.",
    ],
  },
  AUTH_UNAUTHORIZED: {
    meaning: "The request carries no usable API key.",
    causes: [
      "The Authorization header is missing, uses another scheme than Bearer, or holds more than one token.",
      "The token is not shaped p6_<key_id>:<secret>.",
    ],
    actions: [
      "Send `Authorization: Bearer p6_<key_id>:<secret>` with the key exactly as it was issued.",
      "The response does not say which case applied, on purpose.",
    ],
  },
  AUTH_INVALID_TOKEN: {
    meaning: "The API key is well formed but not accepted.",
    causes: ["The key does not exist, its secret is wrong, it was revoked, or it expired."],
    actions: [
      "Check that the key in use is the current one; create a new key in the dashboard if it was revoked or expired.",
      "Do not retry with the same key: the answer will not change.",
    ],
  },
  INSUFFICIENT_CREDITS: {
    meaning: "The account does not have enough credits for the operation's cost.",
    causes: [
      "The balance is lower than the operation's cost (each operation states its cost in its description).",
      "Concurrent requests spent the balance while this one was running.",
    ],
    actions: [
      "Top up the account's credits, then retry. A synchronous request may be retried with the same Idempotency-Key: a 402 does not consume it.",
    ],
  },
  PERMISSION_FORBIDDEN: {
    meaning:
      "The API key is valid but lacks the scope the request needs, or the resource is not yours to access.",
    causes: [
      "A key with only the `read` scope sent a POST (every method other than GET and HEAD needs `write`).",
      "A file URL's signature does not match, or it has expired.",
    ],
    actions: [
      "Use a key with the needed scope, or ask the operator for one.",
      "For an output file, fetch the task or result again to get a fresh signed URL.",
    ],
  },
  RESOURCE_NOT_FOUND: {
    meaning: "Nothing exists at the requested path for this account.",
    causes: [
      "A task id that does not exist, belongs to another account, or is not a ULID.",
      "An output file that was deleted after its retention period.",
      "A typo in the path.",
    ],
    actions: ["Check the id and path; list your tasks with GET /v1/tasks."],
  },
  METHOD_NOT_ALLOWED: {
    meaning: "The path exists but does not accept this HTTP method.",
    causes: ["For example GET on a synchronous operation, which only accepts POST."],
    actions: ["Use one of the methods listed in the response's `Allow` header."],
  },
  RESOURCE_CONFLICT: {
    meaning: "The request conflicts with the current state of a resource.",
    causes: [
      "A request with the same Idempotency-Key is still being processed.",
      "A task was asked to cancel after it already ended.",
      "An upload PATCH sent an Upload-Offset other than the upload's current offset (another PATCH got there first, or an interrupted one kept more bytes).",
      "An upload that is not complete yet was named as source_upload_id or watermark_upload_id (the field is named).",
    ],
    actions: [
      "For an idempotency conflict, wait for the first request to finish (see Retry-After when present) and retry with the same key to receive its result.",
      "For a task, read it with GET /v1/tasks/{id}: it is already terminal.",
      "For an upload, send HEAD /v1/uploads/{id} and PATCH from the Upload-Offset it reports; finish an upload before naming it as a source.",
    ],
  },
  REQUEST_BODY_TOO_LARGE: {
    meaning: "The request body, or the source media, is larger than the service accepts.",
    causes: [
      "The JSON body exceeds 1 MiB.",
      "The source media exceeds the size or pixel limits of the operation.",
      "An upload's Upload-Length exceeds the maximum (5 GiB by default), or a PATCH carries bytes past its Upload-Length.",
    ],
    actions: ["Send a smaller body or a smaller source; retrying the same request fails the same way."],
  },
  CONTENT_TYPE_UNSUPPORTED: {
    meaning: "A media type is not supported.",
    causes: [
      "The request body is not application/json.",
      "The source (or watermark) is in a format the operation cannot read.",
    ],
    actions: [
      "Send `Content-Type: application/json`.",
      "Convert the source to a supported format (each operation lists what it accepts).",
    ],
  },
  IDEMPOTENCY_KEY_REUSE: {
    meaning: "The Idempotency-Key was already used for a different request.",
    causes: ["The same key was sent with another path or another body."],
    actions: [
      "Use a new, unique key for each distinct request (a UUID is a good choice); reuse a key only to retry the very same request.",
    ],
  },
  RATE_LIMIT_EXCEEDED: {
    meaning: "The API key sent more requests than its per-minute limit.",
    causes: ["Too many requests within a sliding 60-second window for this key."],
    actions: [
      "Wait the number of seconds in the `Retry-After` header, then retry.",
      "Pace requests with the `RateLimit` and `RateLimit-Policy` headers every authenticated response carries.",
    ],
  },
  INTERNAL: {
    meaning: "The service failed in a way it did not expect.",
    causes: ["A fault on the service's side; the details are logged, never returned."],
    actions: [
      "Retry later; for a synchronous operation reuse the same Idempotency-Key.",
      "If it persists, contact support quoting the `request_id`.",
    ],
  },
  SOURCE_UNREACHABLE: {
    meaning: "The service could not fetch the source media (or the watermark image).",
    causes: [
      "The URL answers an error status, times out, or does not resolve.",
      "The URL points to a private or loopback address, which the service refuses to fetch.",
      "Too many redirects.",
    ],
    actions: ["Check that the URL is public and answers 200 to a plain GET, then retry."],
  },
  SERVICE_UNAVAILABLE: {
    meaning: "The service is temporarily unable to handle the request.",
    causes: ["The media engine is overloaded or restarting."],
    actions: [
      "Retry after the delay in `Retry-After` when present, otherwise with exponential backoff.",
      "For large or many inputs prefer asynchronous tasks (POST /v1/tasks).",
    ],
  },
  PROCESSING_TIMEOUT: {
    meaning: "A synchronous operation did not finish within its time budget.",
    causes: ["The source is too long or too large to process while the client waits."],
    actions: [
      "Create an asynchronous task instead (POST /v1/tasks with the same type and params) and wait for its webhook or poll it.",
    ],
  },
};
