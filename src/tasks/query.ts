import { and, between, desc, eq, gte, lt, lte, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { type TaskRow, type TaskStatus, tasks } from "../db/schema";

export type TaskFilter = {
  idPrefix?: string;
  status?: TaskStatus;
  type?: string;
  createdFrom?: number;
  createdTo?: number;
  /** Keyset: only tasks older than this id (the last id of the previous page). */
  beforeId?: string;
  limit: number;
};

/** The largest ULID with a given prefix: ULID characters sort below "Z". */
const upperBound = (prefix: string) => prefix.padEnd(26, "Z");

/** One page of an account's tasks, newest first (ULID order), stable under concurrent inserts. */
export async function listTasks(db: Db, accountId: string, filter: TaskFilter) {
  const where: SQL[] = [eq(tasks.accountId, accountId)];
  if (filter.idPrefix) where.push(between(tasks.id, filter.idPrefix, upperBound(filter.idPrefix)));
  if (filter.status) where.push(eq(tasks.status, filter.status));
  if (filter.type) where.push(eq(tasks.type, filter.type));
  if (filter.createdFrom !== undefined) where.push(gte(tasks.createdAt, filter.createdFrom));
  if (filter.createdTo !== undefined) where.push(lte(tasks.createdAt, filter.createdTo));
  if (filter.beforeId) where.push(lt(tasks.id, filter.beforeId));
  const rows = await db
    .select()
    .from(tasks)
    .where(and(...where))
    .orderBy(desc(tasks.id))
    .limit(filter.limit + 1)
    .all();
  const hasNext = rows.length > filter.limit;
  return { rows: hasNext ? rows.slice(0, filter.limit) : rows, hasNext };
}

/** A task by id, whoever owns it: callers compare `accountId` before revealing anything. */
export async function getTaskById(db: Db, id: string): Promise<TaskRow | undefined> {
  return db.select().from(tasks).where(eq(tasks.id, id)).get();
}

const ENDED: ReadonlySet<TaskStatus> = new Set(["succeeded", "failed", "canceled"]);
/** How long an ended task is kept in the isolate at most, and how many. */
const ENDED_TTL_MS = 60_000;
const ENDED_MAX = 1000;
const ended = new Map<string, { row: TaskRow; until: number }>();

/**
 * getTaskById for GET /v1/tasks/{id}, with ended tasks kept in the isolate. A task's row never changes once
 * it has ended (transitions.ts endTask: only queued/processing rows change status, and nothing else writes
 * an ended row) until its outputs expire at expires_at, when the runner removes them (data_removed). So a
 * copy kept until min(expires_at, 60 s) is exactly the row D1 holds, and clients that read a finished task
 * again (polling, fetching its output URLs) do not cost a database read. Tasks still running are always
 * read from D1.
 */
export async function readTask(db: Db, id: string, now = Date.now()): Promise<TaskRow | undefined> {
  const hit = ended.get(id);
  if (hit !== undefined && now < hit.until) return hit.row;
  if (hit !== undefined) ended.delete(id);
  const row = await getTaskById(db, id);
  if (row !== undefined && ENDED.has(row.status) && !row.dataRemoved && row.expiresAt > now) {
    if (ended.size >= ENDED_MAX) ended.delete(ended.keys().next().value!);
    ended.set(id, { row, until: Math.min(row.expiresAt, now + ENDED_TTL_MS) });
  }
  return row;
}

/** A task of this account, or undefined (another account's task is indistinguishable from a missing one). */
export async function getTask(db: Db, accountId: string, id: string): Promise<TaskRow | undefined> {
  return db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, id), eq(tasks.accountId, accountId)))
    .get();
}
