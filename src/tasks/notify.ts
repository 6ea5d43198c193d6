import { getConfig } from "../config/config";
import type { Db } from "../db/client";
import type { TaskRow } from "../db/schema";
import { enqueueWebhook } from "../webhooks/enqueue";
import { eventForStatus } from "../webhooks/events";
import { serializeTask } from "./serialize";

/** After a task ended: its webhook (when it has one and the filter lets the event through). */
export async function notifyEnded(env: Env, db: Db, task: TaskRow) {
  const event = eventForStatus(task.status);
  if (!task.webhookUrl || !event) return;
  const config = getConfig(env);
  const view = await serializeTask(task, {
    origin: task.origin,
    fileSigningSecret: config.fileSigningSecret,
  });
  await enqueueWebhook(
    { db, queue: env.WEBHOOK_QUEUE, now: Date.now(), firstDelaySeconds: config.webhookRetryDelaysSeconds[0] },
    task,
    event,
    JSON.stringify(view),
  );
}
