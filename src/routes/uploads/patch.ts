import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../errors/api-error";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { writeUpload } from "../../uploads/service";
import { OFFSET_OCTET_STREAM, parseChecksum, parseNonNegative } from "../../uploads/tus";
import { offsetHeaders, requireTus, TUS_HEADERS, tusError, tusResumable, UploadIdParam } from "./schema";

const route = createRoute({
  method: "patch",
  path: "/v1/uploads/{id}",
  operationId: "patchUpload",
  tags: ["Uploads"],
  summary: "Append bytes to an upload",
  description: `tus core: the body's bytes are appended at Upload-Offset, which must be the upload's current offset (HEAD gives it; 409 otherwise). Content-Type \`${OFFSET_OCTET_STREAM}\` (415 otherwise). A PATCH cut off midway keeps the bytes that arrived (resume from HEAD's Upload-Offset) — unless it carried Upload-Checksum (\`sha256 <base64>\` of this body), which is checked when the body ends: 460 on a mismatch, and nothing of that PATCH is kept. Bytes past Upload-Length → 413, nothing kept. Send at most 100 MB per PATCH (a Worker request's limit; tus-js-client: \`chunkSize\`). The PATCH that brings the last byte completes the upload. Needs the write scope.`,
  request: {
    params: UploadIdParam,
    headers: z.object({
      "Tus-Resumable": tusResumable,
      "Upload-Offset": z
        .string()
        .optional()
        .openapi({
          param: { name: "Upload-Offset", in: "header" },
          description: "Required: where these bytes start.",
          example: "0",
        }),
      "Upload-Checksum": z
        .string()
        .optional()
        .openapi({
          param: { name: "Upload-Checksum", in: "header" },
          description: "Optional: `sha256 <base64 digest of this body>`.",
          example: "sha256 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
        }),
    }),
    body: {
      required: true,
      content: { [OFFSET_OCTET_STREAM]: { schema: z.string().openapi({ format: "binary" }) } },
    },
  },
  responses: {
    204: {
      description: "The bytes were kept; Upload-Offset is the new offset.",
      headers: {
        "Tus-Resumable": TUS_HEADERS["Tus-Resumable"],
        "Upload-Offset": TUS_HEADERS["Upload-Offset"],
        "Upload-Expires": TUS_HEADERS["Upload-Expires"],
      },
    },
    ...errorResponses(400, 401, 403, 404, 409, 410, 412, 413, 415, 429, 460, 500),
  },
});

/** The tus headers of a request carrying bytes (PATCH, creation-with-upload). */
export function bodyHeaders(c: Context<AppEnv>) {
  const contentType = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (contentType !== OFFSET_OCTET_STREAM)
    throw new ApiError("CONTENT_TYPE_UNSUPPORTED", `Upload bytes must be sent as ${OFFSET_OCTET_STREAM}.`);
  const checksum = parseChecksum(c.req.header("upload-checksum"));
  if (!checksum.ok) throw tusError(checksum.failure);
  const length = c.req.header("content-length");
  return {
    contentLength: length === undefined ? null : parseNonNegative(length),
    checksum: checksum.digest,
  };
}

export function registerPatchUpload(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    requireTus(c.req.header("tus-resumable"));
    const offset = parseNonNegative(c.req.header("upload-offset"));
    if (offset === null)
      throw ApiError.invalid("Upload-Offset", "Upload-Offset must be a non-negative integer.");
    const record = await writeUpload(
      c.env,
      {
        accountId: c.get("principal").accountId,
        id: c.req.valid("param").id,
        offset,
        ...bodyHeaders(c),
      },
      c.req.raw.body,
      Date.now(),
    );
    for (const [name, value] of Object.entries(offsetHeaders(record))) c.header(name, value);
    return c.body(null, 204);
  });
}
