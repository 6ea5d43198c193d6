import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * An account's tus uploads (src/uploads): the list the console shows and the ownership check of
 * source_upload_id. The live state (offset, parts, the R2 multipart upload) is the upload's Durable Object's;
 * this row changes at creation, completion, expiry and deletion.
 */
export const uploads = sqliteTable(
  "uploads",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    /** Upload-Length: the size the client declared. */
    sizeBytes: integer("size_bytes").notNull(),
    /** From Upload-Metadata `filename`, when sent. */
    filename: text("filename"),
    /** uploading | complete | expired | deleted */
    state: text("state").notNull(),
    /** The media type sniffed from the bytes once complete (never the client's claim). */
    mediaType: text("media_type"),
    r2Key: text("r2_key").notNull(),
    createdAt: integer("created_at").notNull(),
    completedAt: integer("completed_at"),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("uploads_account_created_idx").on(t.accountId, t.createdAt)],
);

export type UploadRow = typeof uploads.$inferSelect;
