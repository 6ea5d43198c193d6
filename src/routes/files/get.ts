import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { ApiError } from "../../errors/api-error";
import { errorResponses } from "../../errors/openapi";
import { authorizeFileUrl } from "../../files/access";
import type { AppEnv } from "../../http/context";

const params = z.object({
  file_id: z
    .string()
    .openapi({ param: { name: "file_id", in: "path" }, example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB" }),
  name: z.string().openapi({ param: { name: "name", in: "path" }, example: "output.mp4" }),
});
const query = z.object({
  expires: z
    .string()
    .regex(/^\d{1,12}$/, "Must be a Unix time in seconds.")
    .openapi({ example: "1795400000" }),
  signature: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, "Must be 64 hex characters.")
    .openapi({ example: "5d1f0c8e9a7b6c3d2e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f809" }),
});

const description = `A produced file, by the signed, expiring URL that results and task outputs carry. No
Authorization header: the signature (HMAC-SHA256) is the credential. Supports HEAD, Range requests (206) and
conditional requests (ETag); HEAD answers the same headers. A tampered signature → 403; an expired URL → 403; a deleted file → 404.`;

const responses = {
  200: {
    description: "The file.",
    content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } },
  },
  206: { description: "The requested range." },
  304: { description: "Not modified (If-None-Match)." },
  416: { description: "Range not satisfiable." },
  ...errorResponses(400, 403, 404, 500),
};

const get = createRoute({
  method: "get",
  path: "/files/{file_id}/{name}",
  operationId: "downloadFile",
  tags: ["Files"],
  summary: "Download an output file",
  description,
  security: [],
  request: { params, query },
  responses,
});

function fileHeaders(file: { name: string; contentType: string }, object: R2Object) {
  const headers = new Headers();
  object.writeHttpMetadata(headers);
  headers.set("Content-Type", file.contentType);
  headers.set("ETag", object.httpEtag);
  headers.set("Accept-Ranges", "bytes");
  headers.set("Content-Disposition", `inline; filename="${file.name.replace(/["\\]/g, "_")}"`);
  headers.set("Cache-Control", "private, max-age=3600");
  return headers;
}

export function registerFileRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(get, async (c) => {
    const { file_id, name } = c.req.valid("param");
    const { expires, signature } = c.req.valid("query");
    const file = await authorizeFileUrl(
      c.get("db"),
      c.get("config").fileSigningSecret,
      { fileId: file_id, name, expires: Number(expires), signature },
      Date.now(),
    );
    const range = c.req.header("range");
    const object = await c.env.FILES.get(file.r2Key, { range: c.req.raw.headers, onlyIf: c.req.raw.headers });
    if (!object) throw new ApiError("RESOURCE_NOT_FOUND", "The file no longer exists.");
    const headers = fileHeaders(file, object);
    if (!("body" in object)) return new Response(null, { status: 304, headers });
    if (range && object.range) {
      const r = object.range as { offset?: number; length?: number; suffix?: number };
      const offset = r.suffix !== undefined ? object.size - r.suffix : (r.offset ?? 0);
      const length = r.suffix !== undefined ? r.suffix : (r.length ?? object.size - offset);
      if (offset >= object.size || length <= 0) {
        headers.set("Content-Range", `bytes */${object.size}`);
        return new Response(null, { status: 416, headers });
      }
      headers.set("Content-Range", `bytes ${offset}-${offset + length - 1}/${object.size}`);
      headers.set("Content-Length", String(length));
      return new Response(object.body, { status: 206, headers });
    }
    headers.set("Content-Length", String(object.size));
    return new Response(object.body, { status: 200, headers });
  });
}
