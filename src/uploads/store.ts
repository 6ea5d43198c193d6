import { and, desc, eq, lt } from "drizzle-orm";
import type { Db } from "../db/client";
import { type UploadRow, uploads } from "../db/schema";

/** A complete upload by id (the signed source route: the signature already named it). */
export async function getCompleteUpload(db: Db, id: string, now: number): Promise<UploadRow | undefined> {
  const row = await db.select().from(uploads).where(eq(uploads.id, id)).get();
  return row && row.state === "complete" && row.expiresAt > now ? row : undefined;
}

/** An account's uploads, newest first (the console's list), `before` a creation time for the next page. */
export async function listUploads(db: Db, accountId: string, limit: number, before?: number) {
  const where =
    before === undefined
      ? eq(uploads.accountId, accountId)
      : and(eq(uploads.accountId, accountId), lt(uploads.createdAt, before));
  return db.select().from(uploads).where(where).orderBy(desc(uploads.createdAt)).limit(limit).all();
}
