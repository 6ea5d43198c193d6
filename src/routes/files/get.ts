import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { VideoProbeResultSchema } from "@p6/contract/operations";
import { errorResponses, headErrorResponses, headers as responseHeaders } from "../../errors/openapi";
import { authorizeFileUrl } from "../../files/access";
import { serveFile } from "../../files/serve";
import type { AppEnv } from "../../http/context";
import { OUTPUT_CONTENT_TYPES } from "../../operations/engine-runner";

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
    .openapi({ description: "Unix time in seconds after which the URL answers 403.", example: "1795400000" }),
  signature: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, "Must be 64 hex characters.")
    .openapi({
      description: "Hex HMAC-SHA256 that the service computed over the file id, name and expiry.",
      example: "5d1f0c8e9a7b6c3d2e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f809",
    }),
});
/** Range and conditional request headers, as every stored-file route takes them (/files, upload content). */
export const requestHeaders = z.object({
  range: z.string().optional().openapi({
    description:
      "One byte range: `bytes=<first>-<last>`, `bytes=<first>-` or `bytes=-<suffix length>` → 206; one that starts past the end → 416. Several ranges, or a header that is not a valid bytes range, are answered 200 with the whole file.",
    example: "bytes=0-1023",
  }),
  "if-range": z.string().optional().openapi({
    description:
      "An ETag: the Range applies only while the file still has it; otherwise 200 with the whole file.",
  }),
  "if-none-match": z
    .string()
    .optional()
    .openapi({ description: "An ETag the client holds: 304 while it matches." }),
});

const description = `A produced file, by the signed, expiring URL that results and task outputs carry. No
Authorization header: the signature (HMAC-SHA256) is the credential. Content-Type is the file's own (images,
video, audio; application/json for a probe task's output). Range requests (one range → 206 with Content-Range,
a range past the end → 416 with \`Content-Range: bytes */<size>\`, several ranges → 200 whole) and conditional
requests (ETag, If-None-Match → 304; If-Range) are supported. A tampered signature → 403; an expired URL →
403; a deleted file → 404.`;

const binary = z.string().openapi({ format: "binary" });
/** The one JSON output: a probe's (a video.probe task's, or a pipeline's probe step), tagged with its type. */
const ProbeFileSchema = VideoProbeResultSchema.extend({
  type: z.literal("video.probe").openapi({ description: "The operation that made the file." }),
}).openapi("ProbeFile", { description: "A probe's output file: its result fields and its type." });
const fileContent = Object.fromEntries(
  OUTPUT_CONTENT_TYPES.map((type) => [
    type,
    { schema: type === "application/json" ? ProbeFileSchema : binary },
  ]),
);
const header = (description: string, example: string) => ({
  description,
  schema: { type: "string" as const, example },
});
/**
 * A stored file is never a document of this origin: `sandbox` gives it an opaque origin (no cookies, storage
 * or same-origin requests) even where a browser renders it, and `default-src 'none'` lets it load nothing.
 */
export const FILE_CSP = "default-src 'none'; sandbox";

/** The headers of a stored file's answer (/files, upload content). */
export const fileHeaders = {
  "Content-Security-Policy": header("Always, on every answer, errors included.", FILE_CSP),
  ETag: header("Strong entity tag of the file.", '"3858f62230ac3c915f300c664312c63f"'),
  "Accept-Ranges": header("Always `bytes`.", "bytes"),
  "Content-Length": header("Bytes in this response's body.", "1048576"),
  "Content-Disposition": header(
    "`inline` with the file's name: an ASCII `filename` and, for any other name, the exact UTF-8 one as RFC 6266 `filename*`.",
    "inline; filename=\"?t?.mp4\"; filename*=UTF-8''%C3%A9t%C3%A9.mp4",
  ),
  "Cache-Control": header("Private, cacheable for an hour.", "private, max-age=3600"),
};

function responses(head: boolean) {
  const content = head ? {} : { content: fileContent };
  return {
    200: { description: "The whole file.", headers: fileHeaders, ...content },
    206: {
      description: "The requested byte range.",
      headers: { ...fileHeaders, ...responseHeaders("Content-Range") },
      ...content,
    },
    304: {
      description: "Not modified: If-None-Match matched the ETag.",
      headers: { ETag: fileHeaders.ETag },
    },
    ...(head ? headErrorResponses : errorResponses)(400, 403, 404, 405, 416, 500),
  };
}

const route = (method: "get" | "head") =>
  createRoute({
    method,
    path: "/files/{file_id}/{name}",
    operationId: method === "get" ? "downloadFile" : "headFile",
    tags: ["Files"],
    summary: method === "get" ? "Download an output file" : "An output file's headers",
    description:
      method === "get"
        ? description
        : "The headers GET would answer (size, type, ETag, ranges), without the body.",
    security: [],
    request: { params, query, headers: requestHeaders },
    responses: responses(method === "head"),
  });

export function registerFileRoutes(app: OpenAPIHono<AppEnv>) {
  // Hono answers HEAD through the GET handler (without the body); the document lists it as its own operation.
  app.openAPIRegistry.registerPath(route("head"));
  // Every answer, errors and 304 included (the error handler's response passes back through here).
  app.use("/files/*", async (c, next) => {
    await next();
    c.res.headers.set("Content-Security-Policy", FILE_CSP);
  });
  app.openapi(route("get"), async (c) => {
    const { file_id, name } = c.req.valid("param");
    const { expires, signature } = c.req.valid("query");
    const file = await authorizeFileUrl(
      c.get("db"),
      c.get("config").fileSigningSecret,
      { fileId: file_id, name, expires: Number(expires), signature },
      Date.now(),
    );
    return serveFile(c.env.FILES, file, c.req.raw) as never;
  });
}
