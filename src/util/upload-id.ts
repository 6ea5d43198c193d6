/** An upload's id (a ULID) as a request names it: one schema, the contract's (params.watermark_upload_id). */
export { UploadId } from "@p6/contract/params";
