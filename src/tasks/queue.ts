import { and, asc, eq, lt } from "drizzle-orm";
import { getConfig } from "../config/config";
import { createDb, type Db } from "../db/client";
import { tasks } from "../db/schema";
import { notifyEnded } from "./notify";
import { endTask, loadTask } from "./transitions";

export type TaskMessage = { taskId: string };

export function runnerFor(env: Env, taskId: string) {
  return env.TASK_RUNNER.get(env.TASK_RUNNER.idFromName(taskId));
}

/** The tasks queue: hands each task to its Durable Object (idempotent, so redelivery is harmless). */
export async function handleTaskBatch(batch: MessageBatch<TaskMessage>, env: Env) {
  for (const message of batch.messages) {
    try {
      await runnerFor(env, message.body.taskId).start(message.body.taskId);
      message.ack();
    } catch (error) {
      console.error(
        JSON.stringify({
          level: "error",
          queue: batch.queue,
          task_id: message.body.taskId,
          error: String(error),
        }),
      );
      message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
    }
  }
}

/**
 * Dead letters of the tasks queue: a task that could not be handed to its runner after every retry is failed
 * with INTERNAL (and refunded) rather than left queued, and the letter is logged — nothing vanishes silently.
 */
export async function handleTaskDeadLetters(batch: MessageBatch<TaskMessage>, env: Env) {
  const db = createDb(env.DB);
  const config = getConfig(env);
  for (const message of batch.messages) {
    console.error(JSON.stringify({ level: "error", queue: batch.queue, dead_letter: message.body }));
    const task = await loadTask(db, message.body.taskId);
    if (task?.status === "queued") {
      const ended = await endTask(
        db,
        task,
        {
          status: "failed",
          code: "INTERNAL",
          message: "The task could not be scheduled.",
          requestId: task.requestId,
        },
        config.outputTtlMs,
        Date.now(),
      );
      if (ended) await notifyEnded(env, db, ended);
    }
    message.ack();
  }
}

/**
 * A task still queued this long after creation lost its message: send it again (start is idempotent). At most
 * 100 a minute, the longest waiting first (asked for, not left to the query plan: the primary key's ULIDs sort
 * by creation, which gave that order so far).
 */
const STALE_QUEUED_MS = 2 * 60_000;

export async function requeueStaleTasks(env: Env, db: Db, now: number) {
  const stale = await db
    .select({ id: tasks.id })
    .from(tasks)
    .where(and(eq(tasks.status, "queued"), lt(tasks.createdAt, now - STALE_QUEUED_MS)))
    .orderBy(asc(tasks.createdAt), asc(tasks.id))
    .limit(100)
    .all();
  if (stale.length === 0) return;
  await env.TASK_QUEUE.sendBatch(stale.map((t) => ({ body: { taskId: t.id } satisfies TaskMessage })));
}
