// The package for browsers, bundlers and Workers (package.json "exports" default); runtimes matching the "node"
// export condition (Node) take node.ts.
import { browserTus } from "./tus-browser.ts";
import { type CreateUploads, type UploadDirect, uploadsFor } from "./uploads.ts";

export * from "./common.ts";

const uploads = uploadsFor(browserTus);
export const createUploads: CreateUploads = uploads.createUploads;
export const uploadDirect: UploadDirect = uploads.uploadDirect;
