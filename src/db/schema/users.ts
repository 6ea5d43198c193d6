import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * A person who signs in to the customer console. Belongs to one account with a role; today every account has
 * one user, its owner, but nothing here assumes it (more members and roles need no new table).
 * `email` is stored trimmed and lower-cased, so the unique index makes it unique case-insensitively.
 */
export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    role: text("role", { enum: ["owner"] })
      .notNull()
      .default("owner"),
    email: text("email").notNull(),
    /** PHC string of the password's hash (src/users/password.ts); null for a user without a password. */
    passwordHash: text("password_hash"),
    /** When the user opened a verification (or reset) link mailed to `email`; null until then. */
    emailVerifiedAt: integer("email_verified_at"),
    /**
     * Sign-up credits promised but not granted: the account gets them through the ledger when the email is
     * verified, once (the grant zeroes this). 0 for users from before verification, who had them at sign-up.
     */
    pendingCredits: integer("pending_credits").notNull().default(0),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("users_email_idx").on(t.email), index("users_account_idx").on(t.accountId)],
);

export type UserRow = typeof users.$inferSelect;
export type UserRole = UserRow["role"];
