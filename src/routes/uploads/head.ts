import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { readUpload } from "../../uploads/service";
import { offsetHeaders, requireTus, TUS_HEADERS, tusResumable, UploadIdParam } from "./schema";

/** HEAD /v1/uploads/{id}: documented here; Hono answers HEAD with the GET route, which calls `headUpload`. */
export const headRoute = createRoute({
  method: "head",
  path: "/v1/uploads/{id}",
  operationId: "headUpload",
  tags: ["Uploads"],
  summary: "An upload's offset",
  description:
    "tus core: where to resume. Upload-Offset (bytes kept so far; a PATCH still in progress, e.g. one whose connection dropped unnoticed, is stopped first and keeps what it received), Upload-Length, Upload-Expires while incomplete, Upload-Metadata as sent. Unknown, deleted or another account's → 404; expired → 410. Needs the read scope.",
  request: { params: UploadIdParam, headers: z.object({ "Tus-Resumable": tusResumable }) },
  responses: {
    200: {
      description: "The upload's offset and length.",
      headers: {
        "Tus-Resumable": TUS_HEADERS["Tus-Resumable"],
        "Upload-Offset": TUS_HEADERS["Upload-Offset"],
        "Upload-Length": TUS_HEADERS["Upload-Length"],
        "Upload-Expires": TUS_HEADERS["Upload-Expires"],
        "Cache-Control": TUS_HEADERS["Cache-Control"],
      },
    },
    ...errorResponses(401, 403, 404, 410, 412, 429, 500),
  },
});

export async function headUpload(c: Context<AppEnv>, id: string) {
  requireTus(c.req.header("tus-resumable"));
  const record = await readUpload(c.env, c.get("principal").accountId, id, Date.now(), true);
  for (const [name, value] of Object.entries(offsetHeaders(record))) c.header(name, value);
  c.header("Upload-Length", String(record.length));
  if (record.metadata) c.header("Upload-Metadata", record.metadata);
  c.header("Cache-Control", "no-store");
  return c.body(null, 200);
}
