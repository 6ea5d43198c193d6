import { and, eq, isNull, lte } from "drizzle-orm";
import { ulid } from "ulid";
import type { Db } from "../db/client";
import { type FileRow, files } from "../db/schema";

export type NewFile = {
  accountId: string;
  requestId: string;
  taskId?: string | null;
  name: string;
  contentType: string;
  /** Streams must come with their exact length (R2 needs it to store a stream). */
  body: ReadableStream<Uint8Array> | Uint8Array | string;
  sizeBytes: number;
  expiresAt: number;
  now: number;
};

/** Stores an output in R2 under the account and records it; the row is what signed URLs point at. */
export async function storeFile(db: Db, bucket: R2Bucket, file: NewFile): Promise<FileRow> {
  const id = ulid(file.now);
  const r2Key = `accounts/${file.accountId}/files/${id}/${file.name}`;
  const body =
    file.body instanceof ReadableStream
      ? file.body.pipeThrough(new FixedLengthStream(file.sizeBytes))
      : file.body;
  const object = await bucket.put(r2Key, body, {
    httpMetadata: { contentType: file.contentType },
    customMetadata: { accountId: file.accountId, fileId: id },
  });
  const row: FileRow = {
    id,
    accountId: file.accountId,
    taskId: file.taskId ?? null,
    requestId: file.requestId,
    r2Key,
    name: file.name,
    contentType: file.contentType,
    sizeBytes: object?.size ?? file.sizeBytes,
    createdAt: file.now,
    expiresAt: file.expiresAt,
    deletedAt: null,
  };
  await db.insert(files).values(row);
  return row;
}

export async function getLiveFile(db: Db, id: string) {
  return db
    .select()
    .from(files)
    .where(and(eq(files.id, id), isNull(files.deletedAt)))
    .get();
}

/** Deletes the objects of files past their expiry and marks the rows; returns how many went. */
export async function deleteExpiredFiles(db: Db, bucket: R2Bucket, now: number, limit = 500) {
  const expired = await db
    .select({ id: files.id, r2Key: files.r2Key })
    .from(files)
    .where(and(isNull(files.deletedAt), lte(files.expiresAt, now)))
    .limit(limit)
    .all();
  if (expired.length === 0) return 0;
  await bucket.delete(expired.map((f) => f.r2Key));
  for (const file of expired) await db.update(files).set({ deletedAt: now }).where(eq(files.id, file.id));
  return expired.length;
}

/** Deletes a set of files now (a task's outputs at its expiry, or outputs of work that was not delivered). */
export async function deleteFiles(
  db: Db,
  bucket: R2Bucket,
  rows: Pick<FileRow, "id" | "r2Key">[],
  now: number,
) {
  if (rows.length === 0) return;
  await bucket.delete(rows.map((f) => f.r2Key));
  for (const file of rows) await db.update(files).set({ deletedAt: now }).where(eq(files.id, file.id));
}
