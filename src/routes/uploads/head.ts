import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../errors/api-error";
import { headErrorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { type Target, uploadStatus } from "../../uploads/service";
import { offsetHeaders, requireTus, TUS_HEADERS, tusResumable, UploadIdParam } from "./schema";

/** What HEAD answers, on either kind of upload URL. */
export const HEAD_RULES =
  "tus core: where to resume. Upload-Offset (bytes kept so far), Upload-Length, Upload-Expires while incomplete, Upload-Metadata as sent. Asked by a writer (a key with the write scope, or the direct upload URL), a PATCH still in progress — e.g. one whose connection dropped unnoticed — is stopped first and keeps what it received, so the offset is where to resume; a read-only key's HEAD only looks. No body.";

export const HEAD_RESPONSE = {
  description: "The upload's offset and length (no body).",
  headers: {
    "Tus-Resumable": TUS_HEADERS["Tus-Resumable"],
    "Upload-Offset": TUS_HEADERS["Upload-Offset"],
    "Upload-Length": TUS_HEADERS["Upload-Length"],
    "Upload-Expires": TUS_HEADERS["Upload-Expires"],
    "Cache-Control": TUS_HEADERS["Cache-Control"],
  },
};

/** HEAD /v1/uploads/{id}: documented here; Hono answers HEAD with the GET route, which calls `headUpload`. */
export const headRoute = createRoute({
  method: "head",
  path: "/v1/uploads/{id}",
  operationId: "headUpload",
  tags: ["Uploads"],
  summary: "An upload's offset",
  description: `${HEAD_RULES} Unknown, deleted, pending (a direct upload URL not used yet) or another account's → 404; expired → 410. Needs the read scope.`,
  request: { params: UploadIdParam, headers: z.object({ "Tus-Resumable": tusResumable }) },
  responses: { 200: HEAD_RESPONSE, ...headErrorResponses(401, 403, 404, 410, 412, 429, 500) },
});

/** The tus HEAD answer's headers for `target` (the caller answers 200 with no body). */
export async function headUpload(c: Context<AppEnv>, target: Target) {
  requireTus(c.req.header("tus-resumable"));
  const record = await uploadStatus(c.env, target, Date.now(), true);
  if (record.state === "pending")
    throw new ApiError("RESOURCE_NOT_FOUND", "The upload has not been created yet.");
  for (const [name, value] of Object.entries(offsetHeaders(record))) c.header(name, value);
  c.header("Upload-Length", String(record.length));
  if (record.metadata) c.header("Upload-Metadata", record.metadata);
  c.header("Cache-Control", "no-store");
}
