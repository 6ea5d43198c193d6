import { monotonicFactory, type ULIDFactory, ulid } from "ulid";
import { type TaskRow, tasks } from "../../src/db/schema";
import { db } from "./api";

/**
 * One monotonic ULID factory per creation time, so a task's id carries its own created_at (as the server's
 * ids do) and the tasks of one millisecond still sort in the order they were made. A single shared factory
 * (the flake in issue 42) gave a task created "yesterday" the id of whatever millisecond came last, one
 * increment away from its neighbours: an id prefix then matched several tasks.
 */
const factories = new Map<number, ULIDFactory>();
function taskId(createdAt: number): string {
  const next = factories.get(createdAt) ?? monotonicFactory();
  factories.set(createdAt, next);
  return next(createdAt);
}

/** Inserts a task row directly (task creation itself is exercised by the tasks tests). */
export async function insertTask(accountId: string, overrides: Partial<TaskRow> = {}): Promise<TaskRow> {
  const createdAt = overrides.createdAt ?? Date.now();
  const row: TaskRow = {
    id: taskId(createdAt),
    accountId,
    type: "image.watermark",
    status: "queued",
    source: "api",
    sourceUrl: "https://example.com/a.png",
    params: "{}",
    webhookUrl: null,
    webhookEvents: null,
    idempotencyKey: null,
    requestId: ulid(),
    origin: "http://api.test",
    cost: 1,
    charged: 0,
    steps: null,
    progress: 0,
    errorCode: null,
    errorMessage: null,
    errorRequestId: null,
    outputs: "[]",
    dataRemoved: false,
    startedAt: null,
    completedAt: null,
    expiresAt: createdAt + 86_400_000,
    ...overrides,
    createdAt,
  };
  await db().insert(tasks).values(row);
  return row;
}
