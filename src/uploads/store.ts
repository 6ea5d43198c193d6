import { and, desc, eq, gt, inArray, lt, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { type UploadRow, uploads } from "../db/schema";

/** A complete upload by id (the signed source route: the signature already named it). */
export async function getCompleteUpload(db: Db, id: string, now: number): Promise<UploadRow | undefined> {
  const row = await db.select().from(uploads).where(eq(uploads.id, id)).get();
  return row && row.state === "complete" && row.expiresAt > now ? row : undefined;
}

/**
 * GET /v1/uploads: one page of the account's live uploads (pending, uploading, complete, not past their
 * expiry), newest first by id (ULIDs: creation order), keyset below `beforeId`, stable under new uploads.
 */
export async function listLiveUploads(
  db: Db,
  accountId: string,
  page: { beforeId?: string | undefined; limit: number },
  now: number,
) {
  const where: SQL[] = [
    eq(uploads.accountId, accountId),
    inArray(uploads.state, ["pending", "uploading", "complete"]),
    gt(uploads.expiresAt, now),
  ];
  if (page.beforeId) where.push(lt(uploads.id, page.beforeId));
  const rows = await db
    .select()
    .from(uploads)
    .where(and(...where))
    .orderBy(desc(uploads.id))
    .limit(page.limit + 1)
    .all();
  const hasNext = rows.length > page.limit;
  return { rows: hasNext ? rows.slice(0, page.limit) : rows, hasNext };
}
