// The package on Node (package.json "exports" condition "node"): the same API as index.ts, with tus-js-client's
// Node build (node:http, Buffers and Readables).
import { nodeTus } from "./tus-node.ts";
import { type CreateUploads, type UploadDirect, uploadsFor } from "./uploads.ts";

export * from "./common.ts";

const uploads = uploadsFor(nodeTus);
export const createUploads: CreateUploads = uploads.createUploads;
export const uploadDirect: UploadDirect = uploads.uploadDirect;
