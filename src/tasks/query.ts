import { and, between, desc, eq, gte, lt, lte, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { type TaskRow, type TaskStatus, tasks } from "../db/schema";

export type TaskFilter = {
  idPrefix?: string;
  status?: TaskStatus;
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

/** A task of this account, or undefined (another account's task is indistinguishable from a missing one). */
export async function getTask(db: Db, accountId: string, id: string): Promise<TaskRow | undefined> {
  return db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, id), eq(tasks.accountId, accountId)))
    .get();
}
