import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { ApiError } from "../../errors/api-error";
import { errorResponses, headers as responseHeaders } from "../../errors/openapi";
import { serveFile } from "../../files/serve";
import type { AppEnv } from "../../http/context";
import { UPLOAD_MEDIA_TYPES } from "../../uploads/media-type";
import { keyTarget, uploadStatus } from "../../uploads/service";
import { FILE_CSP, fileHeaders, requestHeaders } from "../files/get";
import { UploadIdParam } from "./schema";

const bytes = z.string().openapi({ format: "binary" });
const binary = Object.fromEntries(UPLOAD_MEDIA_TYPES.map((type) => [type, { schema: bytes }]));

const route = createRoute({
  method: "get",
  path: "/v1/uploads/{id}/content",
  operationId: "downloadUpload",
  tags: ["Uploads"],
  summary: "An upload's bytes",
  description:
    "The stored bytes of a complete upload, exactly as sent (compare them with the file, e.g. by sha256). Content-Type is the sniffed media type; Content-Disposition carries the filename (RFC 6266). Range requests (one range → 206, a range past the end → 416, several → 200 whole) and conditional requests (ETag, If-None-Match → 304, If-Range) as for /files. Incomplete or pending → 409; unknown, deleted or another account's → 404; expired → 410. Needs the read scope.",
  request: { params: UploadIdParam, headers: requestHeaders },
  responses: {
    200: { description: "The whole upload.", headers: fileHeaders, content: binary },
    206: {
      description: "The requested byte range.",
      headers: { ...fileHeaders, ...responseHeaders("Content-Range") },
      content: binary,
    },
    304: {
      description: "Not modified: If-None-Match matched the ETag.",
      headers: { ETag: fileHeaders.ETag },
    },
    ...errorResponses(401, 403, 404, 405, 409, 410, 416, 429, 500),
  },
});

export function registerUploadContent(app: OpenAPIHono<AppEnv>) {
  app.use("/v1/uploads/:id/content", async (c, next) => {
    await next();
    c.res.headers.set("Content-Security-Policy", FILE_CSP);
  });
  app.openapi(route, async (c) => {
    const target = keyTarget(c.get("principal"), c.req.valid("param").id);
    const record = await uploadStatus(c.env, target, Date.now());
    if (record.state !== "complete")
      throw new ApiError(
        "RESOURCE_CONFLICT",
        record.state === "pending"
          ? "The upload has not been created yet: its direct upload URL was not used."
          : `The upload is not complete: ${record.offset} of ${record.length} bytes arrived.`,
      );
    const file = {
      r2Key: record.r2Key,
      sizeBytes: record.length,
      name: record.filename ?? record.id,
      contentType: record.mediaType ?? "application/octet-stream",
    };
    // Through the context, so the headers middleware prepared (the key's RateLimit fields) stay on the answer.
    const response = await serveFile(c.env.FILES, file, c.req.raw);
    for (const [name, value] of response.headers) c.header(name, value);
    const status = response.status as 200;
    return (response.body ? c.body(response.body, status) : c.body(null, status)) as never;
  });
}
