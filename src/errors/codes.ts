/** The public error table of interface.md: one row per code. */
export const ERROR_CODES = {
  VALIDATION_INVALID_ARGUMENT: { status: 400, title: "Validation Failed", suffix: "validation" },
  AUTH_UNAUTHORIZED: { status: 401, title: "Unauthorized", suffix: "authentication" },
  AUTH_INVALID_TOKEN: { status: 401, title: "Unauthorized", suffix: "unauthorized" },
  INSUFFICIENT_CREDITS: { status: 402, title: "Payment Required", suffix: "payment" },
  PERMISSION_FORBIDDEN: { status: 403, title: "Forbidden", suffix: "authorization" },
  /** Not in interface.md's table: an account's upload quota is reached (docs/decisions.md "Uploads"). */
  UPLOAD_QUOTA_EXCEEDED: { status: 403, title: "Upload Quota Exceeded", suffix: "upload-quota" },
  RESOURCE_NOT_FOUND: { status: 404, title: "Not Found", suffix: "not-found" },
  METHOD_NOT_ALLOWED: { status: 405, title: "Method Not Allowed", suffix: "method-not-allowed" },
  RESOURCE_CONFLICT: { status: 409, title: "Conflict", suffix: "conflict" },
  /** Not in interface.md's table: a tus upload that expired (docs/decisions.md "Uploads"). */
  RESOURCE_GONE: { status: 410, title: "Gone", suffix: "gone" },
  /** Not in interface.md's table: a tus request without `Tus-Resumable: 1.0.0` (tus 1.0.0 core). */
  TUS_VERSION_UNSUPPORTED: { status: 412, title: "Precondition Failed", suffix: "tus-version" },
  REQUEST_BODY_TOO_LARGE: { status: 413, title: "Payload Too Large", suffix: "too-large" },
  CONTENT_TYPE_UNSUPPORTED: {
    status: 415,
    title: "Unsupported Media Type",
    suffix: "unsupported-media-type",
  },
  /** Not in interface.md's table: /files answers an unsatisfiable Range with it (docs/decisions.md "Files"). */
  RANGE_NOT_SATISFIABLE: { status: 416, title: "Range Not Satisfiable", suffix: "range-not-satisfiable" },
  /** Not in interface.md's table: a PATCH whose bytes do not match its Upload-Checksum (tus checksum extension). */
  CHECKSUM_MISMATCH: { status: 460, title: "Checksum Mismatch", suffix: "checksum-mismatch" },
  IDEMPOTENCY_KEY_REUSE: { status: 422, title: "Idempotency Key Reuse", suffix: "idempotency" },
  RATE_LIMIT_EXCEEDED: { status: 429, title: "Too Many Requests", suffix: "rate-limit" },
  INTERNAL: { status: 500, title: "Internal Server Error", suffix: "internal" },
  SOURCE_UNREACHABLE: { status: 502, title: "Source Unreachable", suffix: "source-unreachable" },
  SERVICE_UNAVAILABLE: { status: 503, title: "Service Unavailable", suffix: "unavailable" },
  PROCESSING_TIMEOUT: { status: 504, title: "Processing Timeout", suffix: "processing-timeout" },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Default `detail` per code, used when the thrower has nothing more specific to say. */
export const DEFAULT_DETAIL: Record<ErrorCode, string> = {
  VALIDATION_INVALID_ARGUMENT: "The request has invalid or missing arguments.",
  AUTH_UNAUTHORIZED: "A valid API key is required: send Authorization: Bearer p6_<key_id>:<secret>.",
  AUTH_INVALID_TOKEN: "The API key is invalid.",
  INSUFFICIENT_CREDITS: "The account does not have enough credits for this operation.",
  PERMISSION_FORBIDDEN: "The API key does not have the scope this request needs.",
  UPLOAD_QUOTA_EXCEEDED:
    "The account has reached an upload quota (incomplete uploads at once, or bytes stored); the detail names it.",
  RESOURCE_NOT_FOUND: "The requested resource does not exist.",
  METHOD_NOT_ALLOWED: "The method is not allowed on this resource.",
  RESOURCE_CONFLICT: "A request with the same Idempotency-Key is still in progress.",
  RESOURCE_GONE: "The upload has expired; its bytes were discarded.",
  TUS_VERSION_UNSUPPORTED: "Upload requests must send Tus-Resumable: 1.0.0.",
  CHECKSUM_MISMATCH: "The bytes of this PATCH do not match its Upload-Checksum; none of them were kept.",
  REQUEST_BODY_TOO_LARGE: "The request body exceeds the maximum size of 1 MiB.",
  CONTENT_TYPE_UNSUPPORTED: "The media type is not supported.",
  RANGE_NOT_SATISFIABLE:
    "The Range header asks for no byte of the file; Content-Range: bytes */<size> gives its size.",
  IDEMPOTENCY_KEY_REUSE: "The Idempotency-Key was already used for a different request.",
  RATE_LIMIT_EXCEEDED: "Rate limit exceeded; retry after the delay in Retry-After.",
  INTERNAL: "An internal error occurred. Quote the request_id when contacting support.",
  SOURCE_UNREACHABLE: "The source media could not be fetched.",
  SERVICE_UNAVAILABLE: "The service is temporarily unavailable; retry later.",
  PROCESSING_TIMEOUT:
    "The synchronous time budget was exceeded; use the asynchronous endpoint (POST /v1/tasks) for large inputs.",
};
