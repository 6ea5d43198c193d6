import type { z } from "@hono/zod-openapi";
import { exactlyOneOf, HttpUrl, UploadId } from "@p6/contract/params";

/**
 * The source of an operation or task, as every request names it: a public URL or a complete upload of the
 * account (docs/decisions.md "Uploads as sources"), exactly one of the two.
 */
export const sourceShape = {
  source_url: HttpUrl.optional().openapi({
    description: "Public http(s) URL of the source media. Exactly one of source_url or source_upload_id.",
    example: "https://example.com/in.mp4",
  }),
  source_upload_id: UploadId.optional().openapi({
    description:
      "The source as a complete upload of this account (POST /v1/uploads), in place of source_url. Another account's or an unknown id → 404, expired → 410, incomplete → 409, each naming source_upload_id.",
    example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB",
  }),
};

/** The document's statement of `oneSource`, for a body's `.openapi()`: a oneOf of the two. */
export const sourceVariants = exactlyOneOf([
  { title: "Source by URL", field: "source_url" },
  { title: "Source by upload", field: "source_upload_id" },
]);

export function oneSource(body: { source_url?: string; source_upload_id?: string }, ctx: z.RefinementCtx) {
  if (body.source_url !== undefined && body.source_upload_id !== undefined)
    ctx.addIssue({
      code: "custom",
      path: ["source_upload_id"],
      message: "Give either source_url or source_upload_id, not both.",
    });
  if (body.source_url === undefined && body.source_upload_id === undefined)
    ctx.addIssue({
      code: "custom",
      path: ["source_url"],
      message: "One of source_url or source_upload_id is required.",
    });
}
