import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./users";

/**
 * A signed-in console session. The cookie carries a random token; only its SHA-256 (hex) is stored here, so a
 * read of this table signs no one in. A session ends at `expires_at` (absolute) or after an idle period counted
 * from `last_seen_at` (src/sessions/store.ts).
 */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    createdAt: integer("created_at").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("sessions_user_idx").on(t.userId)],
);

export type SessionRow = typeof sessions.$inferSelect;
