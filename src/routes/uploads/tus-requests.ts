import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../errors/api-error";
import type { AppEnv } from "../../http/context";
import type { UploadRecord } from "../../uploads/record";
import { type NewUpload, type PatchInput, type Target, writeUpload } from "../../uploads/service";
import {
  OFFSET_OCTET_STREAM,
  parseChecksum,
  parseMetadata,
  parseNonNegative,
  TUS_CHECKSUM_ALGORITHMS,
  uploadFilename,
} from "../../uploads/tus";
import { BYTE_COUNT, requiredHeader, requireTus, tusError, tusResumable } from "./schema";

/**
 * The tus requests as both kinds of upload URL take them (an API key's /v1/uploads, a direct upload URL):
 * their documented headers and the checks every one of them gets, in tus's terms.
 */

export const creationHeaders = z.object({
  "Tus-Resumable": tusResumable,
  "Upload-Length": requiredHeader("Upload-Length", "The file's size in bytes.", "314572800", BYTE_COUNT),
  "Upload-Metadata": z
    .string()
    .optional()
    .openapi({
      param: { name: "Upload-Metadata", in: "header" },
      description:
        "Optional: comma-separated `key base64(value)` pairs; `filename` (any UTF-8 without control characters) is kept.",
      example: "filename Y2xpcC5tcDQ=",
    }),
});

export const patchHeaders = z.object({
  "Tus-Resumable": tusResumable,
  "Upload-Offset": requiredHeader("Upload-Offset", "Where these bytes start.", "0", BYTE_COUNT),
  "Upload-Checksum": z
    .string()
    .optional()
    .openapi({
      param: { name: "Upload-Checksum", in: "header" },
      description: `Optional: \`<algorithm> <base64 digest of this body>\`, algorithm ${TUS_CHECKSUM_ALGORITHMS.join(" or ")}.`,
      example: "sha1 2jmj7l5rSw0yVb/vlWAYkK/YBwk=",
    }),
});

export const octetBody = (required: boolean) => ({
  required,
  content: { [OFFSET_OCTET_STREAM]: { schema: z.string().openapi({ format: "binary" }) } },
});

/** The tus headers of a request carrying bytes (PATCH, creation-with-upload). */
export function bodyHeaders(c: Context<AppEnv>): Omit<PatchInput, "offset"> {
  const contentType = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (contentType !== OFFSET_OCTET_STREAM)
    throw new ApiError("CONTENT_TYPE_UNSUPPORTED", `Upload bytes must be sent as ${OFFSET_OCTET_STREAM}.`);
  const checksum = parseChecksum(c.req.header("upload-checksum"));
  if (!checksum.ok) throw tusError(checksum.failure);
  const length = c.req.header("content-length");
  return {
    contentLength: length === undefined ? null : parseNonNegative(length),
    checksum: checksum.checksum,
  };
}

/** A creation POST: the new upload's length and name, and the first bytes' headers when it carries a body. */
export function creationRequest(c: Context<AppEnv>) {
  requireTus(c.req.header("tus-resumable"));
  if (c.req.header("upload-defer-length") !== undefined)
    throw ApiError.invalid(
      "Upload-Defer-Length",
      "Upload-Defer-Length is not supported; send Upload-Length.",
    );
  const length = parseNonNegative(c.req.header("upload-length"));
  if (length === null)
    throw ApiError.invalid("Upload-Length", "Upload-Length is required: the file's size in bytes.");
  const rawMetadata = c.req.header("upload-metadata") ?? null;
  const metadata = parseMetadata(rawMetadata ?? undefined);
  if (metadata === null)
    throw ApiError.invalid(
      "Upload-Metadata",
      "Upload-Metadata must be comma-separated `key base64value` pairs.",
    );
  const filename = uploadFilename(metadata);
  if (!filename.ok) throw tusError(filename.failure);
  const hasBody = c.req.raw.body !== null && c.req.header("content-length") !== "0";
  const upload: NewUpload = { length, filename: filename.filename, metadata: rawMetadata };
  return { upload, bytes: hasBody ? bodyHeaders(c) : null };
}

/** A PATCH: where its bytes start and what they must be. */
export function patchRequest(c: Context<AppEnv>): PatchInput {
  requireTus(c.req.header("tus-resumable"));
  const offset = parseNonNegative(c.req.header("upload-offset"));
  if (offset === null)
    throw ApiError.invalid("Upload-Offset", "Upload-Offset must be a non-negative integer.");
  return { offset, ...bodyHeaders(c) };
}

/**
 * creation-with-upload: the creation POST's body as the upload's first PATCH. The upload exists by then, so an
 * error carries its Location (set on the context before), and the client can resume it.
 */
export async function firstBytes(
  c: Context<AppEnv>,
  target: Target,
  bytes: ReturnType<typeof creationRequest>["bytes"],
  record: UploadRecord,
  now: number,
) {
  if (!bytes) return record;
  try {
    return await writeUpload(c.env, target, { offset: 0, ...bytes }, c.req.raw.body, now);
  } catch (error) {
    if (error instanceof ApiError)
      throw new ApiError(error.code, error.detail, {
        errors: error.errors,
        headers: { ...error.headers, Location: c.res.headers.get("Location")! },
      });
    throw error;
  }
}
