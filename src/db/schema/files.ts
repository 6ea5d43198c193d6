import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/** Output files kept in R2 under accounts/<account_id>/, served by signed /files URLs until expires_at. */
export const files = sqliteTable(
  "files",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    taskId: text("task_id"),
    requestId: text("request_id").notNull(),
    r2Key: text("r2_key").notNull(),
    name: text("name").notNull(),
    contentType: text("content_type").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [index("files_expires_idx").on(t.expiresAt), index("files_task_idx").on(t.taskId)],
);

export type FileRow = typeof files.$inferSelect;
