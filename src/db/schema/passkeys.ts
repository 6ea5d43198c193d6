import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./users";

/** A WebAuthn credential (passkey) a user signs in with; several per user. */
export const passkeys = sqliteTable(
  "passkeys",
  {
    /** The credential id, base64url, as the authenticator reports it. */
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    /** COSE public key, base64url. */
    publicKey: text("public_key").notNull(),
    /** The authenticator's signature counter at the last use (0 for authenticators that keep none). */
    counter: integer("counter").notNull().default(0),
    /** Comma-separated transports ("internal,hybrid"), a hint for the browser at sign-in. */
    transports: text("transports").notNull().default(""),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [index("passkeys_user_idx").on(t.userId)],
);

export type PasskeyRow = typeof passkeys.$inferSelect;
