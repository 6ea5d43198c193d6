import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { createUpload, keyTarget } from "../../uploads/service";
import { OFFSET_OCTET_STREAM } from "../../uploads/tus";
import { offsetHeaders, TUS_HEADERS } from "./schema";
import { creationHeaders, creationRequest, firstBytes, octetBody } from "./tus-requests";

const route = createRoute({
  method: "post",
  path: "/v1/uploads",
  operationId: "createUpload",
  tags: ["Uploads"],
  summary: "Create an upload",
  description: `tus creation: a new upload of Upload-Length bytes (at most the server's maximum, 5 GiB by default: 413 beyond; Upload-Defer-Length is not supported). With a body in \`${OFFSET_OCTET_STREAM}\` (creation-with-upload) its bytes are the first PATCH's. Upload-Metadata \`filename\` is kept and served as the download's name (a control character in it → 400 naming Upload-Metadata); the media type is sniffed from the bytes once complete. An incomplete upload expires 24 h after creation (Upload-Expires), a complete one is kept 7 days. Counts toward the account's upload quotas (incomplete uploads at once, bytes stored; 403 UPLOAD_QUOTA_EXCEEDED beyond, the detail naming the limit; GET /v1/account shows both). Uploads cost no credits (only the operations that read them do). Use a complete upload as \`source_upload_id\` or \`watermark_upload_id\` of any operation or task. A request carries at most 100 MB, so a larger file goes in PATCHes to Location; any tus client does the whole exchange and resumes after a failure (tus-js-client, Uppy's @uppy/tus, tuspy; the TypeScript client's \`createUploads(…).upload(file)\`). Needs the write scope.`,
  request: { headers: creationHeaders, body: octetBody(false) },
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
    const { upload, bytes } = creationRequest(c);
    const principal = c.get("principal");
    const now = Date.now();
    let record = await createUpload(
      { env: c.env, config: c.get("config") },
      principal.accountId,
      upload,
      now,
    );
    c.header("Location", `${new URL(c.req.url).origin}/v1/uploads/${record.id}`);
    record = await firstBytes(c, keyTarget(principal, record.id), bytes, record, now);
    for (const [name, value] of Object.entries(offsetHeaders(record))) c.header(name, value);
    return c.body(null, 201);
  });
}
