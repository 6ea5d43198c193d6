import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * An account's tus uploads (src/uploads): the lists (API and console), the quotas (src/uploads/quota.ts) and
 * the signed source route. The live state (offset, parts, the R2 multipart upload) is the upload's Durable Object's;
 * this row changes at creation, completion, expiry and deletion.
 */
export const uploads = sqliteTable(
  "uploads",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    /** Upload-Length: the size the client declared (0 while pending). */
    sizeBytes: integer("size_bytes").notNull(),
    /** From Upload-Metadata `filename`, when sent. */
    filename: text("filename"),
    /** pending (a direct upload URL not used yet) | uploading | complete | expired | deleted */
    state: text("state").notNull(),
    /** The media type sniffed from the bytes once complete (never the client's claim). */
    mediaType: text("media_type"),
    r2Key: text("r2_key").notNull(),
    createdAt: integer("created_at").notNull(),
    completedAt: integer("completed_at"),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [
    index("uploads_account_created_idx").on(t.accountId, t.createdAt),
    // The quota's sums (src/uploads/quota.ts) read only an account's live rows.
    index("uploads_account_state_idx").on(t.accountId, t.state, t.expiresAt),
  ],
);

export type UploadRow = typeof uploads.$inferSelect;
