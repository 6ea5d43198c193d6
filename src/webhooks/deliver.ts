import { and, eq, sql } from "drizzle-orm";
import { ulid } from "ulid";
import type { Db } from "../db/client";
import { type WebhookDeliveryRow, webhookAttempts, webhookDeliveries } from "../db/schema";
import { type Connect, ConnectionError, postPinned } from "../fetch/pinned";
import { activeSecrets } from "./secrets";
import { signatureHeader } from "./sign";
import { checkWebhookUrl, webhookDestination } from "./url";

/** interface.md Limits: "Webhook delivery attempts: up to 5". */
export const MAX_ATTEMPTS = 5;
/** decisions.md §12: each attempt waits at most 15 s for a response. */
export const DEFAULT_TIMEOUT_MS = 15_000;
const USER_AGENT = "p6-media-api-webhooks/1.0";
/** A message may arrive this much before its scheduled time (clock skew) and still be sent. */
const EARLY_TOLERANCE_MS = 500;
/** How long a claimed attempt holds the delivery beyond its timeout before another message may take over. */
const LEASE_MARGIN_MS = 15_000;
/** What an attempt row says until its result is written, and forever if the Worker died mid-attempt. */
const INTERRUPTED = "interrupted before its result was recorded";

export type DeliverySettings = {
  /** Wait before attempt n+1 is delays[n] seconds: delays[1] after the first failure, …, delays[4] before the 5th. */
  delaysSeconds: readonly number[];
  /** Local development (ALLOW_PRIVATE_SOURCES): loopback and private webhook URLs allowed. */
  allowPrivate: boolean;
  timeoutMs: number;
  /**
   * The DNS-over-HTTPS endpoint (DOH_URL) the URL's name is resolved at before each attempt, every address
   * checked by the address policy; no engine is asked, so deliveries leave while it is down.
   */
  dohUrl: string;
  /**
   * "pinned" (WEBHOOK_EGRESS's default): the attempt connects to an address the check resolved, over a socket
   * (src/fetch/pinned.ts). "platform": `fetch`, which resolves the name again, through Cloudflare's egress
   * (docs/decisions.md "Webhooks": production only).
   */
  egress: "pinned" | "platform";
  /** The TCP connect pinned attempts use (tests stand in for addresses off this machine). */
  connect?: Connect;
};

/** What the queue should do with the message after one step. */
export type Decision = { action: "ack" } | { action: "retry"; delaySeconds: number };

/** One attempt's outcome: error is null exactly when the receiver acknowledged (2xx). */
export type AttemptResult = { statusCode: number | null; latencyMs: number; error: string | null };

function log(fields: Record<string, unknown>) {
  console.log(JSON.stringify({ component: "webhooks", ...fields }));
}

/** Text for an attempt that produced no response, for its record (never includes secrets or headers). */
function describeFailure(error: unknown, timeoutMs: number): string {
  const name = (error as { name?: string })?.name;
  if (name === "TimeoutError" || name === "AbortError") return `timeout after ${timeoutMs / 1000} s`;
  const message = String((error as Error)?.message ?? error);
  if (/refused/i.test(message)) return "connection refused";
  // workerd's connect() reports a refused, unreachable or disallowed address so.
  if (/cannot connect to the specified address/i.test(message)) return "connection refused or lost";
  if (error instanceof ConnectionError) return `connection failed: ${message}`.slice(0, 500);
  if (/before an answer|HTTP\/1\.1|oversized head/.test(message)) return message;
  // workerd reports a refused or reset connection as "Network connection lost."
  if (/connection lost|disconnected|reset/i.test(message)) return "connection refused or lost";
  if (/dns|resolve|not found|ENOTFOUND/i.test(message)) return `DNS lookup failed: ${message}`;
  return `network error: ${message}`.slice(0, 500);
}

/**
 * Where an attempt to `url` may go, or why it must not be made: the literal rule (checkWebhookUrl), then the
 * name resolved now over DNS over HTTPS with every address checked, so a name that has come to point somewhere
 * private since the task was created is not sent to. The addresses are the ones the attempt may connect to.
 */
async function destination(url: string, settings: Pick<DeliverySettings, "allowPrivate" | "dohUrl">) {
  const literal = checkWebhookUrl(url, settings.allowPrivate);
  if (literal !== null) return { refused: literal } as const;
  const verdict = await webhookDestination(url, settings);
  return verdict.kind === "allowed"
    ? ({ addresses: verdict.addresses } as const)
    : { refused: verdict.reason };
}

/** An answer's status and Location, however it was obtained. */
type Answer = { status: number; location: string | null };

/**
 * The request itself. Pinned: to the checked addresses in the resolver's order, the next one only when a
 * connection cannot be made (nothing was sent yet). Platform: `fetch`, redirects not followed.
 */
async function post(
  url: string,
  addresses: string[],
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  settings: Pick<DeliverySettings, "egress" | "connect">,
): Promise<Answer> {
  if (settings.egress === "platform") {
    const response = await fetch(url, { method: "POST", headers, body, redirect: "manual", signal });
    // The receiver's answer body is not needed; release the connection.
    await response.body?.cancel().catch(() => {});
    return { status: response.status, location: response.headers.get("location") };
  }
  let failure: unknown;
  for (const address of addresses.slice(0, 3)) {
    try {
      return await postPinned(new URL(url), address, headers, body, signal, settings.connect);
    } catch (error) {
      failure = error;
      if (!(error instanceof ConnectionError)) throw error;
    }
  }
  throw failure;
}

/**
 * One HTTP attempt: the stored body as is, signed now with every active secret; no redirects followed.
 * A URL the address policy refuses (it may have become forbidden since the task was created) fails the
 * attempt without any request.
 */
export async function sendAttempt(
  delivery: Pick<WebhookDeliveryRow, "id" | "url" | "event" | "body">,
  secrets: string[],
  settings: Pick<DeliverySettings, "allowPrivate" | "timeoutMs" | "dohUrl" | "egress" | "connect">,
): Promise<AttemptResult> {
  const target = await destination(delivery.url, settings);
  if ("refused" in target) return { statusCode: null, latencyMs: 0, error: `not sent: ${target.refused}` };
  if (secrets.length === 0)
    return { statusCode: null, latencyMs: 0, error: "not sent: the account has no signing secret" };

  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    "Content-Type": "application/json",
    "User-Agent": USER_AGENT,
    "webhook-id": delivery.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatureHeader(secrets, delivery.id, timestamp, delivery.body),
    "X-Webhook-Event": delivery.event,
  };
  const started = Date.now();
  try {
    const answer = await post(
      delivery.url,
      target.addresses,
      headers,
      delivery.body,
      AbortSignal.timeout(settings.timeoutMs),
      settings,
    );
    const latencyMs = Date.now() - started;
    const statusCode = answer.status;
    if (statusCode >= 200 && statusCode < 300) return { statusCode, latencyMs, error: null };
    if (statusCode >= 300 && statusCode < 400) {
      const location = answer.location;
      return {
        statusCode,
        latencyMs,
        error: `redirect to ${location ?? "(no Location)"} not followed`.slice(0, 500),
      };
    }
    return { statusCode, latencyMs, error: `HTTP ${statusCode}` };
  } catch (error) {
    return {
      statusCode: null,
      latencyMs: Date.now() - started,
      error: describeFailure(error, settings.timeoutMs),
    };
  }
}

/**
 * One step of a delivery, for one queue message: at most one attempt, and only the attempt the database says
 * is due. Safe under at-least-once delivery and concurrent duplicates:
 * - delivered or dead → ack, nothing sent;
 * - not yet due (a duplicate message, or an attempt still in flight elsewhere) → retry at the due time;
 * - otherwise the attempt number is claimed by a compare-and-set on attempt_count, in one batch with its
 *   attempt row, so two messages can never both send or record attempt n. The claim also leases the
 *   delivery (next_attempt_at) for the length of the attempt.
 * After the attempt its row and the delivery are updated together: delivered, dead after the 5th failure,
 * or pending with the next due time, which the message's retry delay matches.
 */
export async function processDelivery(
  db: Db,
  deliveryId: string,
  settings: DeliverySettings,
): Promise<Decision> {
  const delivery = await db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.id, deliveryId))
    .get();
  if (!delivery) {
    log({ level: "warn", delivery_id: deliveryId, message: "unknown delivery, message dropped" });
    return { action: "ack" };
  }
  if (delivery.status !== "pending") return { action: "ack" };

  const now = Date.now();
  if (delivery.attemptCount >= MAX_ATTEMPTS) {
    // The last attempt was claimed but its result never written (the Worker died): it counts as failed.
    await db
      .update(webhookDeliveries)
      .set({ status: "dead", nextAttemptAt: null, completedAt: now })
      .where(
        and(
          eq(webhookDeliveries.id, delivery.id),
          eq(webhookDeliveries.status, "pending"),
          eq(webhookDeliveries.attemptCount, delivery.attemptCount),
        ),
      );
    return { action: "ack" };
  }
  if (delivery.nextAttemptAt !== null && delivery.nextAttemptAt - now > EARLY_TOLERANCE_MS) {
    return { action: "retry", delaySeconds: Math.ceil((delivery.nextAttemptAt - now) / 1000) };
  }

  const attempt = delivery.attemptCount + 1;
  const value = <T>(v: T, column: string) => sql<T>`${v}`.as(column);
  const [claim] = await db.batch([
    db
      .update(webhookDeliveries)
      .set({ attemptCount: attempt, nextAttemptAt: now + settings.timeoutMs + LEASE_MARGIN_MS })
      .where(
        and(
          eq(webhookDeliveries.id, delivery.id),
          eq(webhookDeliveries.status, "pending"),
          eq(webhookDeliveries.attemptCount, attempt - 1),
        ),
      ),
    db.insert(webhookAttempts).select(
      db
        .select({
          id: value(ulid(now), "id"),
          deliveryId: webhookDeliveries.id,
          attempt: value(attempt, "attempt"),
          statusCode: value(null, "status_code"),
          latencyMs: value(0, "latency_ms"),
          error: value(INTERRUPTED, "error"),
          createdAt: value(now, "created_at"),
        })
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.id, delivery.id), sql`changes() = 1`)),
    ),
  ]);
  // Another message claimed this attempt first; it carries the delivery on.
  if (claim.meta.changes !== 1) return { action: "ack" };

  const secrets = (await activeSecrets(db, delivery.accountId, now)).map((s) => s.secret);
  const result = await sendAttempt(delivery, secrets, settings);
  const finished = Date.now();
  const outcome =
    result.error === null ? "delivered" : attempt >= MAX_ATTEMPTS ? "dead" : ("pending" as const);
  const delaySeconds = settings.delaysSeconds[attempt] ?? 0;

  await db.batch([
    db
      .update(webhookAttempts)
      .set({ statusCode: result.statusCode, latencyMs: result.latencyMs, error: result.error })
      .where(and(eq(webhookAttempts.deliveryId, delivery.id), eq(webhookAttempts.attempt, attempt))),
    db
      .update(webhookDeliveries)
      .set(
        outcome === "pending"
          ? { nextAttemptAt: finished + delaySeconds * 1000 }
          : { status: outcome, nextAttemptAt: null, completedAt: finished },
      )
      .where(
        and(
          eq(webhookDeliveries.id, delivery.id),
          eq(webhookDeliveries.status, "pending"),
          eq(webhookDeliveries.attemptCount, attempt),
        ),
      ),
  ]);
  log({
    level: result.error === null ? "info" : "warn",
    delivery_id: delivery.id,
    task_id: delivery.taskId,
    event: delivery.event,
    attempt,
    status_code: result.statusCode,
    latency_ms: result.latencyMs,
    error: result.error,
    outcome,
  });
  return outcome === "pending" ? { action: "retry", delaySeconds } : { action: "ack" };
}
