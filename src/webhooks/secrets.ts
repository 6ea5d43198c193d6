import { and, desc, eq, gt, isNull, or } from "drizzle-orm";
import { ulid } from "ulid";
import type { Db } from "../db/client";
import { webhookSecrets } from "../db/schema";
import { bytesToBase64 } from "../util/encoding";

/** How long a rotated-out secret keeps signing (decisions.md §12). */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** whsec_<base64 of 32 random bytes>, the Standard Webhooks form. */
export function generateWebhookSecret() {
  return `whsec_${bytesToBase64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

export function newSecretRow(accountId: string, now: number) {
  return { id: ulid(now), accountId, secret: generateWebhookSecret(), activeUntil: null, createdAt: now };
}

/** The secrets that sign deliveries now: the current one first, then any still inside its overlap. */
export async function activeSecrets(db: Db, accountId: string, now: number) {
  return db
    .select({ secret: webhookSecrets.secret, activeUntil: webhookSecrets.activeUntil })
    .from(webhookSecrets)
    .where(
      and(
        eq(webhookSecrets.accountId, accountId),
        or(isNull(webhookSecrets.activeUntil), gt(webhookSecrets.activeUntil, now)),
      ),
    )
    .orderBy(desc(webhookSecrets.id))
    .all();
}

/** Stores a new current secret; the previous current one stays valid for 24 h. One batch, so never zero. */
export async function rotateWebhookSecret(db: Db, accountId: string, now: number) {
  const row = newSecretRow(accountId, now);
  const previousActiveUntil = now + ROTATION_OVERLAP_MS;
  await db.batch([
    db
      .update(webhookSecrets)
      .set({ activeUntil: previousActiveUntil })
      .where(and(eq(webhookSecrets.accountId, accountId), isNull(webhookSecrets.activeUntil))),
    db.insert(webhookSecrets).values(row),
  ]);
  return { secret: row.secret, previousActiveUntil };
}
