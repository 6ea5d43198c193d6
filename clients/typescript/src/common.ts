// What every entry exports (index.ts for browsers and bundlers, node.ts for Node): all but the upload functions,
// which each entry binds to its platform's tus-js-client.
export { type ClientPaths, createP6Client, type P6Client, type P6ClientOptions } from "./client.ts";
export type { components, operations, paths } from "./generated/api.js";
export { type RetryOptions, retryAfterMs, retryingFetch } from "./retry.ts";
export {
  type CreatePipelineTask,
  P6ApiError,
  type Problem,
  type Task,
  type TaskOutput,
  type TaskStep,
  type WaitOptions,
  waitForTask,
} from "./tasks.ts";
export {
  type CreateDirectUpload,
  type CreateUploads,
  DEFAULT_CHUNK_SIZE,
  type DirectUpload,
  type Upload,
  type UploadDirect,
  type UploadList,
  type UploadOptions,
  type UploadResult,
  type UploadSource,
  type Uploads,
  uploadIdOf,
} from "./uploads.ts";
export { verifyWebhook, type WebhookEvent } from "./webhooks.ts";
