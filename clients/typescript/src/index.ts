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
export { verifyWebhook, type WebhookEvent } from "./webhooks.ts";
