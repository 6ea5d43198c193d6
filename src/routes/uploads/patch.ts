import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { keyTarget, writeUpload } from "../../uploads/service";
import { OFFSET_OCTET_STREAM } from "../../uploads/tus";
import { offsetHeaders, TUS_HEADERS, UploadIdParam } from "./schema";
import { octetBody, patchHeaders, patchRequest } from "./tus-requests";

/** What a PATCH does, on either kind of upload URL. */
export const PATCH_RULES = `tus core: the body's bytes are appended at Upload-Offset, which must be the upload's current offset (HEAD gives it; 409 otherwise). Content-Type \`${OFFSET_OCTET_STREAM}\` (415 otherwise). A PATCH cut off midway keeps the bytes that arrived (resume from HEAD's Upload-Offset) — unless it carried Upload-Checksum (\`sha1 <base64>\` or \`sha256 <base64>\` of this body), which is checked when the body ends: 460 on a mismatch, and nothing of that PATCH is kept. Bytes past Upload-Length → 413, nothing kept. A PATCH whose bytes could not be stored answers 500 and is not counted (HEAD tells what was kept). Send at most 100 MB per PATCH (a Worker request's limit; tus-js-client: \`chunkSize\`). The PATCH that brings the last byte completes the upload.`;

export const PATCH_RESPONSE = {
  description: "The bytes were kept; Upload-Offset is the new offset.",
  headers: {
    "Tus-Resumable": TUS_HEADERS["Tus-Resumable"],
    "Upload-Offset": TUS_HEADERS["Upload-Offset"],
    "Upload-Expires": TUS_HEADERS["Upload-Expires"],
  },
};

const route = createRoute({
  method: "patch",
  path: "/v1/uploads/{id}",
  operationId: "patchUpload",
  tags: ["Uploads"],
  summary: "Append bytes to an upload",
  description: `${PATCH_RULES} Needs the write scope.`,
  request: { params: UploadIdParam, headers: patchHeaders, body: octetBody(true) },
  responses: {
    204: PATCH_RESPONSE,
    ...errorResponses(400, 401, 403, 404, 409, 410, 412, 413, 415, 429, 460, 500),
  },
});

export function registerPatchUpload(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const input = patchRequest(c);
    const target = keyTarget(c.get("principal"), c.req.valid("param").id);
    const record = await writeUpload(c.env, target, input, c.req.raw.body, Date.now());
    for (const [name, value] of Object.entries(offsetHeaders(record))) c.header(name, value);
    return c.body(null, 204);
  });
}
