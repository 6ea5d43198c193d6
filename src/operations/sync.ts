import { sql } from "drizzle-orm";
import { withAccountSlot } from "../capacity/slots";
import type { Config } from "../config/config";
import { balanceQuery, requireCredits } from "../credits/balance";
import { type BalanceChange, balanceChangeStatements, balanceTooLow } from "../credits/ledger";
import type { Db } from "../db/client";
import { ApiError } from "../errors/api-error";
import { PROBLEM_JSON, type ProblemContext, problemBody } from "../errors/problem";
import { signFileUrl } from "../files/signing";
import { deleteFiles, storeFile } from "../files/store";
import type { Timing } from "../http/timing";
import {
  claimStatement,
  completeKey,
  completeStatement,
  releaseKey,
  type StoredResponse,
  settleClaim,
} from "../idempotency/store";
import { withBudget } from "./budget";
import { engineFor } from "./engine";
import type { Operation } from "./types";

/** 512 MiB for synchronous audio/video sources (decisions.md §9). */
export const SYNC_MAX_SOURCE_BYTES = 512 * 1024 * 1024;

/** Failures that executed and will fail the same way again: stored and replayed like a success. */
const STORED_FAILURES = new Set(["REQUEST_BODY_TOO_LARGE", "CONTENT_TYPE_UNSUPPORTED"]);

export type SyncRequest = {
  operation: Operation;
  sourceUrl: string;
  params: unknown;
  accountId: string;
  requestId: string;
  idempotencyKey: string;
  fingerprint: string;
  origin: string;
  problem: Omit<ProblemContext, "requestId">;
};

export type SyncServices = {
  env: Env;
  config: Config;
  db: Db;
  timing: Timing;
  waitUntil: (p: Promise<unknown>) => void;
};

/**
 * One synchronous operation (decisions.md §7–§9): claim the Idempotency-Key (or replay / 409 / 422), 402 before
 * any work, run within SYNC_TIMEOUT_SECONDS (504 and the engine job killed past it), store the file, charge
 * once, remember the response. Nothing is charged unless the client gets its result.
 *
 * Storage round trips are few, because under load each one waits for the isolate's thread
 * (docs/performance.md): the claim and the balance are read in one batch, the account's slot is released while
 * the result is stored and charged, and the charge and the remembered response are one batch, so they also
 * happen together or not at all.
 */
export async function executeSync(
  req: SyncRequest,
  svc: SyncServices,
): Promise<{ response: StoredResponse; replayed: boolean }> {
  const { db, config, timing } = svc;
  const key = { accountId: req.accountId, key: req.idempotencyKey, requestId: req.requestId };
  const claimId = {
    ...key,
    fingerprint: req.fingerprint,
    now: Date.now(),
    leaseMs: config.syncTimeoutMs * 2 + 30_000,
  };
  const [claimed, balance] = await db.batch([claimStatement(db, claimId), balanceQuery(db, req.accountId)]);
  const claim = await settleClaim(db, claimId, claimed);
  if (claim.kind === "replay") return { response: claim.response, replayed: true };

  let slotReleased: Promise<void> = Promise.resolve();
  try {
    requireCredits(balance[0], req.operation.cost);
    const engine = engineFor(svc.env, config);
    const body = await withBudget(config.syncTimeoutMs, async (signal) => {
      signal.addEventListener("abort", () => svc.waitUntil(engine.abort(req.requestId).catch(() => {})));
      // The account's share of the engine (src/capacity): over it, 503 + Retry-After before any work.
      const produced = await withAccountSlot(
        svc,
        req.accountId,
        req.requestId,
        () =>
          req.operation.run(
            {
              env: svc.env,
              config,
              engine,
              jobId: req.requestId,
              signal,
              timing,
              maxSourceBytes: SYNC_MAX_SOURCE_BYTES,
              timeoutMs: config.syncTimeoutMs,
              priority: "normal",
            },
            req.sourceUrl,
            req.params,
          ),
        (released) => {
          slotReleased = released;
        },
      );
      const base = { id: req.requestId, type: req.operation.type };
      if (produced.kind === "data") return { result: { ...base, ...produced.data }, file: undefined };
      const now = Date.now();
      const file = await timing.measure("store", () =>
        storeFile(db, svc.env.FILES, {
          accountId: req.accountId,
          requestId: req.requestId,
          name: produced.name,
          contentType: produced.contentType,
          body: produced.body,
          sizeBytes: produced.sizeBytes,
          expiresAt: now + config.outputTtlMs,
          now,
        }),
      );
      if (!config.fileSigningSecret) throw new Error("FILE_SIGNING_SECRET is not configured");
      const url = await signFileUrl(req.origin, config.fileSigningSecret, file.id, file.name, file.expiresAt);
      const result = { ...base, url, expires_at: new Date(file.expiresAt).toISOString(), ...produced.meta };
      return { result, file };
    });

    const response = {
      status: 200,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body.result),
    };
    const charge: BalanceChange = {
      accountId: req.accountId,
      kind: "charge",
      amount: -req.operation.cost,
      requestId: req.requestId,
      reason: req.operation.type,
      now: Date.now(),
    };
    const [update] = await db.batch([
      ...balanceChangeStatements(db, charge),
      // Remembered only when charged: changes() is the ledger row's insert, 1 exactly when the charge applied.
      completeStatement(db, key, response, sql`changes() = 1`),
    ]);
    if (update.meta.changes !== 1) {
      // The balance was spent by a concurrent request meanwhile: no result without payment.
      if (body.file) await deleteFiles(db, svc.env.FILES, [body.file], Date.now());
      throw balanceTooLow(charge);
    }
    return { response, replayed: false };
  } catch (error) {
    if (error instanceof ApiError && STORED_FAILURES.has(error.code)) {
      const problem = problemBody(error, { ...req.problem, requestId: req.requestId });
      await completeKey(db, key, {
        status: error.status,
        headers: { "Content-Type": PROBLEM_JSON },
        body: JSON.stringify(problem),
      });
    } else {
      await releaseKey(db, key);
    }
    throw error;
  } finally {
    await slotReleased;
  }
}
