import type { Db } from "../db/client";
import { ApiError } from "../errors/api-error";
import { verifyFileSignature } from "./signing";
import { getLiveFile } from "./store";

/**
 * Checks a /files URL: a bad signature → 403, an expired one → 403, a file that is gone → 404. The signature is
 * checked first, so nothing about a file is revealed to a URL we did not sign.
 */
export async function authorizeFileUrl(
  db: Db,
  secret: string | undefined,
  url: { fileId: string; name: string; expires: number; signature: string },
  now: number,
) {
  if (!secret) throw new Error("FILE_SIGNING_SECRET is not configured");
  if (!(await verifyFileSignature(secret, url.fileId, url.name, url.expires, url.signature))) {
    throw new ApiError("PERMISSION_FORBIDDEN", "The file URL's signature is not valid.");
  }
  if (url.expires * 1000 <= now) throw new ApiError("PERMISSION_FORBIDDEN", "The file URL has expired.");
  const file = await getLiveFile(db, url.fileId);
  if (!file || file.name !== url.name) throw new ApiError("RESOURCE_NOT_FOUND", "The file no longer exists.");
  return file;
}
