import { getConfig } from "../config/config";
import type { Db } from "../db/client";
import type { TaskRow } from "../db/schema";
import { enqueueWebhook } from "../webhooks/enqueue";
import { eventForStatus, eventWanted, type WebhookEvent } from "../webhooks/events";
import { serializeTask } from "./serialize";

/** After a task ended: its webhook (when it has one and the filter lets the event through). */
export async function notifyEnded(env: Env, db: Db, task: TaskRow) {
  const event = eventForStatus(task.status);
  if (event) await notify(env, db, task, event);
}

/**
 * After a task started processing: the `started` webhook, only when the task's filter names it. Once per task
 * (one delivery per task and event): a task that went back to queued for capacity and starts again sends none.
 */
export async function notifyStarted(env: Env, db: Db, task: TaskRow) {
  await notify(env, db, task, "started");
}

async function notify(env: Env, db: Db, task: TaskRow, event: WebhookEvent) {
  if (!task.webhookUrl || !eventWanted(task.webhookEvents, event)) return;
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
