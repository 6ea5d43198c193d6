/**
 * The tus 1.0.0 protocol's headers (https://tus.io/protocols/resumable-upload): what the routes read and send.
 * Pure functions; the rules that need state live in upload-object.ts.
 */

import { base64ToBytes } from "../util/encoding";

export const TUS_VERSION = "1.0.0";
export const TUS_EXTENSIONS = [
  "creation",
  "creation-with-upload",
  "expiration",
  "termination",
  "checksum",
] as const;
/** A direct upload URL's: no termination (the browser cannot delete; the key's owner can). */
export const DIRECT_TUS_EXTENSIONS = TUS_EXTENSIONS.filter((name) => name !== "termination");
/** The media type of a PATCH body (and of a creation-with-upload POST). */
export const OFFSET_OCTET_STREAM = "application/offset+octet-stream";

export type TusFailure = { code: TusErrorCode; detail: string; field?: string };
export type TusErrorCode =
  | "VALIDATION_INVALID_ARGUMENT"
  | "TUS_VERSION_UNSUPPORTED"
  | "CONTENT_TYPE_UNSUPPORTED"
  | "REQUEST_BODY_TOO_LARGE";

/** Every request but OPTIONS must say it speaks 1.0.0 (412 otherwise). */
export function checkTusResumable(value: string | undefined): TusFailure | null {
  if (value === undefined)
    return { code: "TUS_VERSION_UNSUPPORTED", detail: "The Tus-Resumable header is missing; send 1.0.0." };
  if (value.trim() !== TUS_VERSION)
    return {
      code: "TUS_VERSION_UNSUPPORTED",
      detail: `Tus-Resumable ${JSON.stringify(value.slice(0, 40))} is not supported; this server speaks 1.0.0.`,
    };
  return null;
}

/** A non-negative integer header (Upload-Length, Upload-Offset, Content-Length), or null when malformed. */
export function parseNonNegative(value: string | undefined): number | null {
  if (value === undefined || !/^\d{1,16}$/.test(value.trim())) return null;
  const n = Number(value.trim());
  return Number.isSafeInteger(n) ? n : null;
}

/** Upload-Metadata: comma-separated `key base64value` pairs (value optional); null when malformed. */
export function parseMetadata(value: string | undefined): Record<string, string> | null {
  const out: Record<string, string> = {};
  if (value === undefined || value.trim() === "") return out;
  if (value.length > 4096) return null;
  for (const pair of value.split(",")) {
    const [key, encoded, ...rest] = pair.trim().split(" ");
    if (!key || rest.length > 0 || !/^[\x21-\x2B\x2D-\x7E]+$/.test(key) || key in out) return null;
    if (encoded === undefined) {
      out[key] = "";
      continue;
    }
    try {
      out[key] = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(base64ToBytes(encoded));
    } catch {
      return null;
    }
  }
  return out;
}

/** Unicode Cc: the C0 controls (NUL, CR, LF …), DEL and the C1 controls, never part of a name we serve. */
const CONTROL = /\p{Cc}/u;
const FILENAME_MAX = 255;

/**
 * Upload-Metadata's `filename`: any UTF-8 text without control characters, its first 255 characters (code
 * points, so a character is never cut in half) kept; null when absent or empty; a failure naming
 * Upload-Metadata for a control character (it would break Content-Disposition and log lines).
 */
export function uploadFilename(
  metadata: Record<string, string>,
): { ok: true; filename: string | null } | { ok: false; failure: TusFailure } {
  const name = metadata.filename;
  if (name === undefined || name === "") return { ok: true, filename: null };
  if (CONTROL.test(name))
    return {
      ok: false,
      failure: {
        code: "VALIDATION_INVALID_ARGUMENT",
        field: "Upload-Metadata",
        detail:
          "Upload-Metadata's filename must not contain control characters (C0, DEL, C1: NUL, CR, LF …).",
      },
    };
  return { ok: true, filename: [...name].slice(0, FILENAME_MAX).join("") };
}

/** The tus checksum extension's algorithms we verify (sha1 is the one the extension says a server MUST). */
export const TUS_CHECKSUM_ALGORITHMS = ["sha1", "sha256"] as const;
export type ChecksumAlgorithm = (typeof TUS_CHECKSUM_ALGORITHMS)[number];
const DIGEST_BYTES: Record<ChecksumAlgorithm, number> = { sha1: 20, sha256: 32 };

/** Upload-Checksum `<algorithm> <base64 digest>`: the algorithm and expected digest, or a failure to answer. */
export function parseChecksum(
  value: string | undefined,
):
  | { ok: true; checksum: { algorithm: ChecksumAlgorithm; digest: Uint8Array } | null }
  | { ok: false; failure: TusFailure } {
  if (value === undefined) return { ok: true, checksum: null };
  const [name, encoded, ...rest] = value.trim().split(/\s+/);
  const algorithm = TUS_CHECKSUM_ALGORITHMS.find((a) => a === name?.toLowerCase());
  const invalid = (detail: string) => ({
    ok: false as const,
    failure: { code: "VALIDATION_INVALID_ARGUMENT" as const, field: "Upload-Checksum", detail },
  });
  if (!algorithm || rest.length > 0)
    return invalid(
      `Upload-Checksum must be \`<algorithm> <base64 digest>\` with algorithm ${TUS_CHECKSUM_ALGORITHMS.join(" or ")}.`,
    );
  let digest: Uint8Array;
  try {
    digest = base64ToBytes(encoded ?? "");
  } catch {
    digest = new Uint8Array();
  }
  if (digest.byteLength !== DIGEST_BYTES[algorithm])
    return invalid(
      `Upload-Checksum's ${algorithm} digest must be ${DIGEST_BYTES[algorithm]} bytes in base64.`,
    );
  return { ok: true, checksum: { algorithm, digest } };
}

/** RFC 9110 IMF-fixdate, as Upload-Expires is sent. */
export const httpDate = (ms: number) => new Date(ms).toUTCString();

/**
 * R2 multipart rules (developers.cloudflare.com/r2/objects/multipart-objects): parts of 5 MiB to 5 GiB, all but
 * the last of one size, the last no larger, at most 10,000. Each upload gets one part size at creation: 8 MiB
 * (so a part is one bounded buffer in its Durable Object), larger in whole MiB when 10,000 parts would not
 * hold the declared length.
 */
export const MIN_PART_BYTES = 8 * 1024 * 1024;
export const MAX_PARTS = 10_000;
export function partSizeFor(length: number): number {
  const mib = 1024 * 1024;
  return Math.max(MIN_PART_BYTES, Math.ceil(length / MAX_PARTS / mib) * mib);
}
