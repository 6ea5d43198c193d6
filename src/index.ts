import { createApp } from "./app";
import { createDb } from "./db/client";
import { deleteExpiredFiles } from "./files/store";
import { purgeExpiredKeys } from "./idempotency/store";
import { purgeExpiredSessions } from "./sessions/store";
import { handleTaskBatch, handleTaskDeadLetters, requeueStaleTasks, type TaskMessage } from "./tasks/queue";
import { handleWebhookBatch, handleWebhookDeadLetters } from "./webhooks/consumer";

export { KeyGate } from "./auth/key-gate";
export { AccountSlots } from "./capacity/account-slots";
export { MediaEngineContainer } from "./engine/container";
export { RequestLog } from "./requests/request-log";
export { TaskRunner } from "./tasks/runner";
export { UploadObject } from "./uploads/upload-object";
export { Throttle } from "./users/throttle";

const app = createApp();

export default {
  fetch: app.fetch,

  async queue(batch, env, ctx) {
    switch (batch.queue) {
      case "p6-tasks":
        return handleTaskBatch(batch as MessageBatch<TaskMessage>, env);
      case "p6-tasks-dlq":
        return handleTaskDeadLetters(batch as MessageBatch<TaskMessage>, env);
      case "p6-webhooks":
        return handleWebhookBatch(batch as Parameters<typeof handleWebhookBatch>[0], env, ctx);
      case "p6-webhooks-dlq":
        return handleWebhookDeadLetters(batch as Parameters<typeof handleWebhookDeadLetters>[0], env);
      default:
        console.error(JSON.stringify({ level: "error", message: `no consumer for queue ${batch.queue}` }));
        batch.retryAll();
    }
  },

  /** Every minute: re-queue tasks whose message was lost, delete expired outputs, purge old idempotency keys and ended console sessions. */
  async scheduled(_controller, env) {
    const db = createDb(env.DB);
    const now = Date.now();
    await requeueStaleTasks(env, db, now);
    await deleteExpiredFiles(db, env.FILES, now);
    await purgeExpiredKeys(db, now);
    await purgeExpiredSessions(db, now);
  },
} satisfies ExportedHandler<Env>;
