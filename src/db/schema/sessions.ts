import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./users";

/**
 * A signed-in session: a console user's (`kind` "user", with `user_id`) or an operator's on the dashboard
 * (`kind` "operator", no user: the operator is whoever holds ADMIN_TOKEN). The cookie carries a random token;
 * only a digest of it is stored here, so a read of this table signs no one in. A session ends at `expires_at`
 * (absolute) or after its kind's idle period counted from `last_seen_at`, or when it is deleted (sign-out)
 * (src/sessions/store.ts).
 */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    kind: text("kind", { enum: ["user", "operator"] })
      .notNull()
      .default("user"),
    userId: text("user_id").references(() => users.id),
    createdAt: integer("created_at").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [
    index("sessions_user_idx").on(t.userId),
    // Unqualified names: the generated migration builds the table under another name, then renames it.
    check("sessions_owner", sql`("kind" = 'user') = ("user_id" IS NOT NULL)`),
  ],
);

export type SessionRow = typeof sessions.$inferSelect;
export type SessionKind = SessionRow["kind"];
