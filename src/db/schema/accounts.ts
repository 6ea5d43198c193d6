import { sql } from "drizzle-orm";
import { check, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** A paying customer. `credits` is the spendable balance; the CHECK makes a negative balance impossible. */
export const accounts = sqliteTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    credits: integer("credits").notNull().default(0),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [check("accounts_credits_non_negative", sql`${t.credits} >= 0`)],
);

export type AccountRow = typeof accounts.$inferSelect;
