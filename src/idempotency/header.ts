import { ApiError } from "../errors/api-error";

/** 1–255 printable ASCII characters (interface.md "Limits"). */
const KEY = /^[\x20-\x7E]{1,255}$/;

export function parseIdempotencyKey(value: string | undefined): string {
  if (value === undefined) {
    throw ApiError.invalid(
      "Idempotency-Key",
      "The Idempotency-Key header is required on this route.",
      "missing",
    );
  }
  if (!KEY.test(value)) {
    throw ApiError.invalid(
      "Idempotency-Key",
      "The Idempotency-Key must be 1 to 255 printable ASCII characters.",
    );
  }
  return value;
}
