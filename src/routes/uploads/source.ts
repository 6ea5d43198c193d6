import type { OpenAPIHono } from "@hono/zod-openapi";
import { ApiError } from "../../errors/api-error";
import { serveFile } from "../../files/serve";
import type { AppEnv } from "../../http/context";
import { verifyUploadSourceSignature } from "../../uploads/source";
import { getCompleteUpload } from "../../uploads/store";
import { isUlid } from "../../util/ulid";
import { FILE_CSP } from "../files/get";

/**
 * GET (and HEAD) /upload-sources/{id}?expires=&signature=: a complete upload's bytes for the media engine,
 * which fetches it like any source (ranges included). Not part of the public contract (not in the document):
 * only the Worker mints these URLs (src/uploads/source.ts), valid for one job's time. A bad or expired
 * signature → 403 before anything about the upload is read; an upload gone since → 404.
 */
export function registerUploadSource(app: OpenAPIHono<AppEnv>) {
  app.use("/upload-sources/*", async (c, next) => {
    await next();
    c.res.headers.set("Content-Security-Policy", FILE_CSP);
  });
  app.get("/upload-sources/:id", async (c) => {
    const id = c.req.param("id");
    const expires = Number(c.req.query("expires"));
    const signature = c.req.query("signature") ?? "";
    const secret = c.get("config").fileSigningSecret;
    if (!secret) throw new Error("FILE_SIGNING_SECRET is not configured");
    if (
      !isUlid(id) ||
      !Number.isSafeInteger(expires) ||
      !/^[0-9a-fA-F]{64}$/.test(signature) ||
      !(await verifyUploadSourceSignature(secret, id, expires, signature))
    ) {
      throw new ApiError("PERMISSION_FORBIDDEN", "The source URL's signature is not valid.");
    }
    const now = Date.now();
    if (expires * 1000 <= now) throw new ApiError("PERMISSION_FORBIDDEN", "The source URL has expired.");
    const row = await getCompleteUpload(c.get("db"), id, now);
    if (!row) throw new ApiError("RESOURCE_NOT_FOUND", "The upload no longer exists.");
    return serveFile(
      c.env.FILES,
      {
        r2Key: row.r2Key,
        sizeBytes: row.sizeBytes,
        name: row.filename ?? row.id,
        contentType: row.mediaType ?? "application/octet-stream",
      },
      c.req.raw,
    );
  });
}
