import type { Db } from "../db/client";
import type { TaskRow } from "../db/schema";
import { getTaskById } from "./query";
import { runnerFor } from "./queue";

const ENDED = new Set(["succeeded", "failed", "canceled"]);

/**
 * `Prefer: wait`: the task as soon as it has ended, or as it is after `seconds`. The task's runner (its
 * Durable Object) holds the call and releases it on the task's terminal transition, so the answer follows the
 * ending by a D1 read, not by a polling interval. Should the runner be unreachable or reset, the task is
 * answered as it is then.
 */
export async function taskWhenEnded(env: Env, db: Db, task: TaskRow, seconds: number): Promise<TaskRow> {
  if (ENDED.has(task.status)) return task;
  const waited = await runnerFor(env, task.id)
    .waitForEnd(task.id, seconds * 1000)
    .catch(() => undefined);
  return waited?.task ?? (await getTaskById(db, task.id)) ?? task;
}
