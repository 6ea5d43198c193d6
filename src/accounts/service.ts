import { desc, eq, lt } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { ulid } from "ulid";
import { balanceChangeStatements } from "../credits/ledger";
import type { Db } from "../db/client";
import { type AccountRow, accounts, apiKeys, webhookSecrets } from "../db/schema";
import { buildKey } from "../keys/service";
import { newSecretRow } from "../webhooks/secrets";

/**
 * Creates an account with its webhook secret and a default API key (interface.md: "A default key is created
 * at sign-up"), and grants the opening credits through the ledger — all in one batch, with any statements
 * `also` adds for the new account (console sign-up: its owner), so either all of it exists or none.
 */
export async function createAccount(
  db: Db,
  input: { name: string; credits: number },
  now: number,
  also: (accountId: string) => BatchItem<"sqlite">[] = () => [],
) {
  const account: AccountRow = { id: ulid(now), name: input.name, credits: 0, createdAt: now };
  const secret = newSecretRow(account.id, now);
  const { row: keyRow, key } = await buildKey(account.id, { name: "default" }, now);
  const grant =
    input.credits > 0
      ? balanceChangeStatements(db, {
          accountId: account.id,
          kind: "grant",
          amount: input.credits,
          reason: "opening balance",
          now,
        })
      : [];
  await db.batch([
    db.insert(accounts).values(account),
    db.insert(webhookSecrets).values(secret),
    db.insert(apiKeys).values(keyRow),
    ...grant,
    ...also(account.id),
  ]);
  return { account: { ...account, credits: input.credits }, webhookSecret: secret.secret, key, keyRow };
}

export async function getAccount(db: Db, id: string) {
  return db.select().from(accounts).where(eq(accounts.id, id)).get();
}

export async function listAccounts(db: Db, page: { beforeId?: string; limit: number }) {
  const rows = await db
    .select()
    .from(accounts)
    .where(page.beforeId ? lt(accounts.id, page.beforeId) : undefined)
    .orderBy(desc(accounts.id))
    .limit(page.limit + 1)
    .all();
  const hasNext = rows.length > page.limit;
  return { rows: hasNext ? rows.slice(0, page.limit) : rows, hasNext };
}

export function accountView(row: AccountRow) {
  return {
    id: row.id,
    name: row.name,
    credits: row.credits,
    created_at: new Date(row.createdAt).toISOString(),
  };
}
