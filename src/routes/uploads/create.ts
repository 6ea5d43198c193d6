import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { ApiError } from "../../errors/api-error";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { createUpload, writeUpload } from "../../uploads/service";
import { OFFSET_OCTET_STREAM, parseMetadata, parseNonNegative } from "../../uploads/tus";
import { bodyHeaders } from "./patch";
import { offsetHeaders, requireTus, TUS_HEADERS, tusResumable } from "./schema";

const route = createRoute({
  method: "post",
  path: "/v1/uploads",
  operationId: "createUpload",
  tags: ["Uploads"],
  summary: "Create an upload",
  description: `tus creation: a new upload of Upload-Length bytes (at most the server's maximum, 5 GiB by default: 413 beyond; Upload-Defer-Length is not supported). With a body in \`${OFFSET_OCTET_STREAM}\` (creation-with-upload) its bytes are the first PATCH's. Upload-Metadata \`filename\` is kept and shown; the media type is sniffed from the bytes once complete. An incomplete upload expires 24 h after creation (Upload-Expires), a complete one is kept 7 days; uploads cost no credits (only the operations that read them do). Use a complete upload as \`source_upload_id\` or \`watermark_upload_id\` of any operation or task. Needs the write scope.`,
  request: {
    headers: z.object({
      "Tus-Resumable": tusResumable,
      "Upload-Length": z
        .string()
        .optional()
        .openapi({
          param: { name: "Upload-Length", in: "header" },
          description: "Required: the file's size in bytes.",
          example: "314572800",
        }),
      "Upload-Metadata": z
        .string()
        .optional()
        .openapi({
          param: { name: "Upload-Metadata", in: "header" },
          description: "Optional: comma-separated `key base64(value)` pairs; `filename` is kept.",
          example: "filename Y2xpcC5tcDQ=",
        }),
    }),
    body: {
      required: false,
      content: { [OFFSET_OCTET_STREAM]: { schema: z.string().openapi({ format: "binary" }) } },
    },
  },
  responses: {
    201: {
      description: "Created; Location is the upload's URL, Upload-Offset what the body (if any) brought.",
      headers: {
        "Tus-Resumable": TUS_HEADERS["Tus-Resumable"],
        Location: TUS_HEADERS.Location,
        "Upload-Offset": TUS_HEADERS["Upload-Offset"],
        "Upload-Expires": TUS_HEADERS["Upload-Expires"],
      },
    },
    ...errorResponses(400, 401, 403, 409, 412, 413, 415, 429, 460, 500),
  },
});

export function registerCreateUpload(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
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
    const hasBody = c.req.raw.body !== null && c.req.header("content-length") !== "0";
    const bytes = hasBody ? bodyHeaders(c) : null;
    const accountId = c.get("principal").accountId;
    const now = Date.now();
    let record = await createUpload(
      { env: c.env, config: c.get("config") },
      { accountId, length, filename: metadata.filename?.slice(0, 255) || null, metadata: rawMetadata },
      now,
    );
    c.header("Location", `${new URL(c.req.url).origin}/v1/uploads/${record.id}`);
    if (bytes) {
      try {
        record = await writeUpload(
          c.env,
          { accountId, id: record.id, offset: 0, ...bytes },
          c.req.raw.body,
          now,
        );
      } catch (error) {
        // The upload exists: its Location is sent with the error, so the client can resume it.
        if (error instanceof ApiError)
          throw new ApiError(error.code, error.detail, {
            headers: { Location: c.res.headers.get("Location")! },
          });
        throw error;
      }
    }
    for (const [name, value] of Object.entries(offsetHeaders(record))) c.header(name, value);
    return c.body(null, 201);
  });
}
