import { monotonicFactory } from "ulid";
import { type TaskRow, tasks } from "../../src/db/schema";
import { db } from "./api";

const nextId = monotonicFactory();

/** Inserts a task row directly (task creation itself is exercised by the tasks tests). */
export async function insertTask(accountId: string, overrides: Partial<TaskRow> = {}): Promise<TaskRow> {
  const createdAt = overrides.createdAt ?? Date.now();
  const row: TaskRow = {
    id: nextId(createdAt),
    accountId,
    type: "image.watermark",
    status: "queued",
    source: "api",
    sourceUrl: "https://example.com/a.png",
    params: "{}",
    webhookUrl: null,
    webhookEvents: null,
    idempotencyKey: null,
    requestId: nextId(),
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
