import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./users";

/**
 * A link mailed to a user: "verify" (the email is theirs) or "reset" (a new password). The link carries
 * `<id>.<secret>`; the row keeps the id (a ULID, the lookup key) and only the SHA-256 of the secret, compared in
 * constant time, so a read of this table opens nothing. A token is spent by setting `used_at` in one
 * conditional statement (single use) and is refused after `expires_at` (src/users/email-tokens.ts).
 */
export const emailTokens = sqliteTable(
  "email_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    purpose: text("purpose", { enum: ["verify", "reset"] }).notNull(),
    /** SHA-256 (hex) of the secret half of the link. */
    secretHash: text("secret_hash").notNull(),
    /** The address it was sent to: a token is good only while the user's email is still this one. */
    email: text("email").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    usedAt: integer("used_at"),
  },
  (t) => [index("email_tokens_user_idx").on(t.userId, t.purpose)],
);

export type EmailTokenRow = typeof emailTokens.$inferSelect;
export type EmailTokenPurpose = EmailTokenRow["purpose"];
