import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { accounts } from "../db/schema";
import { ApiError } from "../errors/api-error";

/** 402 before any work when the balance cannot cover the cost (decisions.md §7). */
export async function requireCredits(db: Db, accountId: string, cost: number) {
  const row = await db
    .select({ credits: accounts.credits })
    .from(accounts)
    .where(eq(accounts.id, accountId))
    .get();
  if ((row?.credits ?? 0) < cost) {
    throw new ApiError(
      "INSUFFICIENT_CREDITS",
      `This operation costs ${cost} credit${cost === 1 ? "" : "s"}; the balance is ${row?.credits ?? 0}.`,
    );
  }
}
