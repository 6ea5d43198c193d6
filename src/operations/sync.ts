import { withAccountSlot } from "../capacity/slots";
import type { Config } from "../config/config";
import { requireCredits } from "../credits/balance";
import { applyBalanceChange } from "../credits/ledger";
import type { Db } from "../db/client";
import { ApiError } from "../errors/api-error";
import { PROBLEM_JSON, type ProblemContext, problemBody } from "../errors/problem";
import { signFileUrl } from "../files/signing";
import { deleteFiles, storeFile } from "../files/store";
import type { Timing } from "../http/timing";
import { claimKey, completeKey, releaseKey, type StoredResponse } from "../idempotency/store";
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
 */
export async function executeSync(
  req: SyncRequest,
  svc: SyncServices,
): Promise<{ response: StoredResponse; replayed: boolean }> {
  const { db, config, timing } = svc;
  const key = { accountId: req.accountId, key: req.idempotencyKey, requestId: req.requestId };
  const claim = await claimKey(db, {
    ...key,
    fingerprint: req.fingerprint,
    now: Date.now(),
    leaseMs: config.syncTimeoutMs * 2 + 30_000,
  });
  if (claim.kind === "replay") return { response: claim.response, replayed: true };

  try {
    await requireCredits(db, req.accountId, req.operation.cost);
    const engine = engineFor(svc.env, config);
    const body = await withBudget(config.syncTimeoutMs, async (signal) => {
      signal.addEventListener("abort", () => svc.waitUntil(engine.abort(req.requestId).catch(() => {})));
      // The account's share of the engine (src/capacity): over it, 503 + Retry-After before any work.
      const produced = await withAccountSlot(svc, req.accountId, req.requestId, () =>
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
          },
          req.sourceUrl,
          req.params,
        ),
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

    try {
      await applyBalanceChange(db, {
        accountId: req.accountId,
        kind: "charge",
        amount: -req.operation.cost,
        requestId: req.requestId,
        reason: req.operation.type,
        now: Date.now(),
      });
    } catch (error) {
      // The balance was spent by a concurrent request meanwhile: no result without payment.
      if (body.file) await deleteFiles(db, svc.env.FILES, [body.file], Date.now());
      throw error;
    }
    const response = {
      status: 200,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body.result),
    };
    await completeKey(db, key, response);
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
  }
}
