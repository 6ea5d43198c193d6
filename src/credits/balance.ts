import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { accounts } from "../db/schema";
import { ApiError } from "../errors/api-error";

/** An account's balance, as a statement for a batch (one row, or none for an unknown account). */
export function balanceQuery(db: Db, accountId: string) {
  return db.select({ credits: accounts.credits }).from(accounts).where(eq(accounts.id, accountId)).limit(1);
}

/** 402 before any work when the balance cannot cover the cost (decisions.md §7). */
export function requireCredits(balance: { credits: number } | undefined, cost: number) {
  const credits = balance?.credits ?? 0;
  if (credits < cost) {
    throw new ApiError(
      "INSUFFICIENT_CREDITS",
      `This operation costs ${cost} credit${cost === 1 ? "" : "s"}; the balance is ${credits}.`,
    );
  }
}
