import { DurableObject } from "cloudflare:workers";
import { getConfig } from "../config/config";
import { createDb } from "../db/client";
import type { WebhookMessage } from "../webhooks/enqueue";
import { enqueueUploadWebhook } from "../webhooks/upload-events";
import { mediaTypeOf, SNIFF_BYTES } from "./media-type";
import { PartSession, type PartStore, PartStoreFailed, readTail, TailCorrupt } from "./part-writer";
import { insertWithinQuota, quotaDetail, quotaUsage, startWithinQuota, type UploadLimits } from "./quota";
import {
  type Actor,
  checkAccess,
  type DirectGrant,
  type Failure,
  fail,
  maySettle,
  notFound,
  ok,
  type Result,
  type UploadRecord,
} from "./record";
import { type ChecksumAlgorithm, partSizeFor } from "./tus";
import { serializeUpload } from "./view";

export type { UploadRecord } from "./record";

export type CreateInput = {
  id: string;
  accountId: string;
  length: number;
  filename: string | null;
  metadata: string | null;
  now: number;
  expiryMs: number;
  retentionMs: number;
  limits: UploadLimits;
};

export type GrantInput = {
  id: string;
  accountId: string;
  grant: DirectGrant;
  now: number;
  retentionMs: number;
  limits: UploadLimits;
};

export type DirectCreateInput = Omit<CreateInput, "id" | "accountId" | "retentionMs"> & {
  /** The deployment's largest Upload-Length (UPLOAD_MAX_BYTES). */
  maxBytes: number;
};

export type WriteInput = {
  offset: number;
  /** The body's Content-Length when the request declared one. */
  contentLength: number | null;
  /** Upload-Checksum, when sent: the algorithm and the digest the body must have. */
  checksum: { algorithm: ChecksumAlgorithm; digest: Uint8Array } | null;
  now: number;
};

const RECORD = "record";
const TAIL_PREFIX = "tail:";
const PART_PREFIX = "part:";
/** Set once the R2 multipart upload is completed, so a retried finish does not complete it twice. */
const ASSEMBLED = "assembled";
/** A PATCH waits this long for the one before it (an interrupted one saving what it got) before 409. */
const LOCK_WAIT_MS = 5_000;

const seq = (n: number) => n.toString().padStart(6, "0");
const DIGEST: Record<ChecksumAlgorithm, string> = { sha1: "SHA-1", sha256: "SHA-256" };

function equalBytes(a: Uint8Array, b: Uint8Array) {
  if (a.byteLength !== b.byteLength) return false;
  let diff = 0;
  for (let i = 0; i < a.byteLength; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

const quotaRefused = (detail: string) => fail("UPLOAD_QUOTA_EXCEEDED", detail);

/**
 * One object per tus upload (src/uploads, docs/decisions.md "Uploads"). It owns the upload's offset, its R2
 * multipart upload and the parts written so far, and, for a direct upload, the one-time URL's grant. PATCHes
 * are serialised here: one writes at a time, the next waits for it and then has its Upload-Offset compared
 * with the offset the first left, so two writers can never both append at one offset.
 *
 * The bytes go through a PartSession (part-writer.ts, whose one invariant says where every byte of the file
 * is): bounded memory, one part-sized buffer. Nothing a PATCH wrote counts until it commits: with a checksum,
 * only when the digest matches; without one, an interrupted PATCH keeps every byte that arrived (tus core),
 * so HEAD then reports where to resume. A write that cannot be stored exactly fails (500) and is never
 * reported as kept; the upload is complete only once R2 holds exactly Upload-Length bytes.
 *
 * A client resuming after a dropped connection sends HEAD, often before the server has seen the drop. HEAD
 * from a writer (a key with the write scope, or the direct URL) therefore asks a PATCH in progress to stop
 * where it is, as tusd's lock-release requests do: that PATCH commits what it has read and answers, and HEAD
 * then reports the offset it left. A read-only key's HEAD only looks. DELETE and expiry stop it the same way.
 */
export class UploadObject extends DurableObject<Env> {
  private writing: Promise<void> | null = null;
  /** Stops the PATCH writing now at the bytes it has read: it commits them and releases the upload. */
  private stopWriting: (() => void) | null = null;
  /** A direct URL's creation in progress: a second one at the same time is the second use (409). */
  private starting = false;

  private get kv() {
    return this.ctx.storage.kv;
  }

  private record(): UploadRecord | undefined {
    return this.kv.get<UploadRecord>(RECORD);
  }

  private save(record: UploadRecord) {
    this.kv.put(RECORD, record);
  }

  private readonly parts: PartStore = {
    getChunk: (k) => this.kv.get<Uint8Array>(`${TAIL_PREFIX}${seq(k)}`),
    putChunk: (k, bytes) => this.kv.put(`${TAIL_PREFIX}${seq(k)}`, bytes),
    deleteChunk: (k) => this.kv.delete(`${TAIL_PREFIX}${seq(k)}`),
    putPart: (part) => this.kv.put(`${PART_PREFIX}${seq(part.partNumber)}`, part.etag),
  };

  private async refusedByQuota(
    accountId: string,
    limits: UploadLimits,
    adding: number,
    countChecked: boolean,
  ) {
    const usage = await quotaUsage(createDb(this.env.DB), accountId, Date.now());
    return quotaRefused(quotaDetail(usage, limits, adding, countChecked));
  }

  /** POST /v1/uploads: the D1 row first (the quota's one conditional statement), then R2 and this object. */
  async create(input: CreateInput): Promise<Result<UploadRecord>> {
    if (this.record()) throw new Error(`upload ${input.id} exists already`);
    const r2Key = `accounts/${input.accountId}/uploads/${input.id}`;
    const expiresAt = input.now + input.expiryMs;
    const admitted = await insertWithinQuota(
      this.env.DB,
      {
        id: input.id,
        accountId: input.accountId,
        sizeBytes: input.length,
        filename: input.filename,
        state: "uploading",
        r2Key,
        createdAt: input.now,
        expiresAt,
      },
      input.limits,
    );
    if (!admitted) return this.refusedByQuota(input.accountId, input.limits, input.length, true);
    const record: UploadRecord = {
      id: input.id,
      accountId: input.accountId,
      length: input.length,
      offset: 0,
      partSize: partSizeFor(input.length),
      r2Key,
      multipartId: "",
      state: "uploading",
      filename: input.filename,
      metadata: input.metadata,
      mediaType: null,
      createdAt: input.now,
      completedAt: null,
      expiresAt,
      retentionMs: input.retentionMs,
      direct: null,
    };
    return this.open(record, input.now);
  }

  /** The R2 multipart upload and the expiry alarm of a record just admitted; a length of 0 completes at once. */
  private async open(record: UploadRecord, now: number): Promise<Result<UploadRecord>> {
    try {
      if (record.length > 0)
        record.multipartId = (await this.env.FILES.createMultipartUpload(record.r2Key)).uploadId;
    } catch (error) {
      // The row counts against the quota: mark it gone with the upload that never started.
      await this.setRowState(record.id, "deleted");
      throw error;
    }
    this.save(record);
    if (record.length === 0) {
      const finished = await this.finish(record, now);
      if (!finished) return fail("INTERNAL", "Completing the empty upload failed; send HEAD to retry.");
      return ok(finished);
    }
    await this.ctx.storage.setAlarm(record.expiresAt);
    return ok(record);
  }

  /** POST /v1/uploads/direct: a pending upload its one-time URL will create; counts as incomplete already. */
  async grant(input: GrantInput): Promise<Result<UploadRecord>> {
    if (this.record()) throw new Error(`upload ${input.id} exists already`);
    const r2Key = `accounts/${input.accountId}/uploads/${input.id}`;
    const admitted = await insertWithinQuota(
      this.env.DB,
      {
        id: input.id,
        accountId: input.accountId,
        sizeBytes: 0,
        filename: null,
        state: "pending",
        r2Key,
        createdAt: input.now,
        expiresAt: input.grant.urlExpiresAt,
      },
      input.limits,
    );
    if (!admitted) return this.refusedByQuota(input.accountId, input.limits, 0, true);
    const record: UploadRecord = {
      id: input.id,
      accountId: input.accountId,
      length: 0,
      offset: 0,
      partSize: 0,
      r2Key,
      multipartId: "",
      state: "pending",
      filename: null,
      metadata: null,
      mediaType: null,
      createdAt: input.now,
      completedAt: null,
      expiresAt: input.grant.urlExpiresAt,
      retentionMs: input.retentionMs,
      direct: input.grant,
    };
    this.save(record);
    await this.ctx.storage.setAlarm(record.expiresAt);
    return ok(record);
  }

  /**
   * The CORS origin and max_size of a direct URL whose secret matches (expired too, so the browser can read
   * the 410): what its preflight allows; null for anything else.
   */
  async directInfo(secretHash: string, now: number) {
    const record = this.record();
    const refused = checkAccess(record, { kind: "direct", secretHash, origin: null }, now);
    if (refused !== null && refused.code !== "RESOURCE_GONE") return null;
    return { corsOrigin: record!.direct!.corsOrigin, maxSize: record!.direct!.maxSize };
  }

  /** The creation POST through a direct URL: once (409 after), before it expires (410), within max_size. */
  async createDirect(actor: Actor, input: DirectCreateInput): Promise<Result<UploadRecord>> {
    const record = this.record();
    const refused = checkAccess(record, actor, input.now);
    if (refused) return refused;
    if (actor.kind !== "direct") return notFound;
    const rec = record!;
    const grant = rec.direct!;
    if (rec.state !== "pending" || this.starting)
      return fail(
        "RESOURCE_CONFLICT",
        "This direct upload URL has been used: it creates one upload. Ask the server that issued it for another.",
      );
    const max = Math.min(grant.maxSize ?? input.maxBytes, input.maxBytes);
    if (input.length > max)
      return fail(
        "REQUEST_BODY_TOO_LARGE",
        `Upload-Length ${input.length} exceeds ${grant.maxSize !== null && grant.maxSize <= input.maxBytes ? "this direct upload URL's max_size" : "the maximum upload size"} of ${max} bytes.`,
      );
    this.starting = true;
    try {
      const expiresAt = input.now + input.expiryMs;
      const admitted = await startWithinQuota(
        this.env.DB,
        {
          id: rec.id,
          accountId: rec.accountId,
          sizeBytes: input.length,
          filename: input.filename,
          expiresAt,
        },
        input.limits,
        input.now,
      );
      if (!admitted) return this.refusedByQuota(rec.accountId, input.limits, input.length, false);
      return await this.open(
        {
          ...rec,
          length: input.length,
          partSize: partSizeFor(input.length),
          state: "uploading",
          filename: input.filename,
          metadata: input.metadata,
          expiresAt,
        },
        input.now,
      );
    } finally {
      this.starting = false;
    }
  }

  /**
   * HEAD and GET: the current state (finishing an upload whose last step failed before). With `settle` (HEAD,
   * a client about to resume) and an actor that may write, a PATCH in progress is stopped first and its commit
   * awaited (at most 5 s), so the offset answered is where that client can resume.
   */
  async status(actor: Actor, now: number, settle = false): Promise<Result<UploadRecord>> {
    if (settle && maySettle(actor) && this.writing && checkAccess(this.record(), actor, now) === null) {
      this.stopWriting?.();
      await Promise.race([this.writing, new Promise((resolve) => setTimeout(resolve, LOCK_WAIT_MS))]);
    }
    const record = this.record();
    const refused = checkAccess(record, actor, now);
    if (refused) return refused;
    if (record!.state === "uploading" && record!.offset === record!.length && !this.writing) {
      const finished = await this.finish(record!, now);
      if (finished) return ok(finished);
    }
    return ok(record!);
  }

  async write(
    actor: Actor,
    input: WriteInput,
    body: ReadableStream<Uint8Array> | null,
  ): Promise<Result<UploadRecord>> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    while (this.writing) {
      const wait = deadline - Date.now();
      if (wait <= 0) {
        await body?.cancel().catch(() => {});
        return fail(
          "RESOURCE_CONFLICT",
          "Another PATCH is writing this upload; send HEAD for its offset and resume from there.",
        );
      }
      await Promise.race([this.writing, new Promise((resolve) => setTimeout(resolve, wait))]);
    }
    let release!: () => void;
    this.writing = new Promise((resolve) => {
      release = resolve;
    });
    try {
      const result = await this.writeLocked(actor, input, body);
      if (!result.ok) await body?.cancel().catch(() => {});
      return result;
    } finally {
      this.writing = null;
      release();
    }
  }

  private async writeLocked(
    actor: Actor,
    input: WriteInput,
    body: ReadableStream<Uint8Array> | null,
  ): Promise<Result<UploadRecord>> {
    const record = this.record();
    const refused = checkAccess(record, actor, input.now);
    if (refused) return refused;
    const rec = record!;
    if (rec.state === "pending") return notFound;
    if (input.offset !== rec.offset)
      return fail(
        "RESOURCE_CONFLICT",
        `Upload-Offset ${input.offset} is not the upload's offset ${rec.offset}; send HEAD for it and resume from there.`,
      );
    const tooLarge = fail(
      "REQUEST_BODY_TOO_LARGE",
      `The PATCH carries bytes past Upload-Length ${rec.length} (offset ${rec.offset}); none of them were kept.`,
    );
    if (input.contentLength !== null && rec.offset + input.contentLength > rec.length) return tooLarge;
    if (rec.state === "complete" || body === null) return this.finishIfWhole(rec, input.now);

    const multipart = this.env.FILES.resumeMultipartUpload(rec.r2Key, rec.multipartId);
    let session: PartSession;
    try {
      session = new PartSession(this.parts, rec.offset, rec.partSize, (n, bytes) =>
        multipart.uploadPart(n, bytes),
      );
    } catch (error) {
      return this.broken(rec, error);
    }
    const digest = input.checksum ? new crypto.DigestStream(DIGEST[input.checksum.algorithm]) : null;
    const hasher = digest?.getWriter();
    let interrupted = false;
    let storeFailed = false;
    let pastLength = false;

    const reader = body.getReader();
    let stopped = false;
    this.stopWriting = () => {
      stopped = true;
      // A pending read ends (done) at once; what was read so far is committed below.
      reader.cancel().catch(() => {});
    };
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          // Ended by a stop (see status): cut off, as far as a checksum is concerned.
          interrupted = stopped;
          break;
        }
        if (session.offset + value.byteLength > rec.length) {
          pastLength = true;
          await reader.cancel().catch(() => {});
          break;
        }
        if (hasher) await hasher.write(value);
        await session.write(value);
      }
    } catch (error) {
      if (error instanceof TailCorrupt) return this.broken(rec, error);
      // R2 refused a part: only what it took counts. Otherwise the client went away (its body errored).
      if (error instanceof PartStoreFailed) {
        storeFailed = true;
        this.log("storing a part failed", rec.id, error);
      } else interrupted = true;
    } finally {
      this.stopWriting = null;
    }

    if (pastLength) return tooLarge;
    if (hasher && digest && input.checksum) {
      const name = input.checksum.algorithm;
      if (interrupted || storeFailed) {
        await hasher.abort().catch(() => {});
        return storeFailed
          ? fail("INTERNAL", "Storing the upload's bytes failed; none of this PATCH was kept. Send it again.")
          : fail(
              "CHECKSUM_MISMATCH",
              "The PATCH ended before all its bytes arrived; none of them were kept.",
            );
      }
      await hasher.close();
      if (!equalBytes(new Uint8Array(await digest.digest), input.checksum.digest))
        return fail(
          "CHECKSUM_MISMATCH",
          `The bytes of this PATCH do not match its Upload-Checksum (${name}); none of them were kept.`,
        );
    }

    // Commit: the parts, the new tail, the offset — in one synchronous run, so no reader sees half of it.
    rec.offset = session.commit(storeFailed);
    this.save(rec);
    if (storeFailed)
      return fail(
        "INTERNAL",
        `Storing the upload's bytes failed; ${rec.offset} bytes are kept. Send HEAD and resume from its offset.`,
      );
    return this.finishIfWhole(rec, input.now);
  }

  private async finishIfWhole(rec: UploadRecord, now: number): Promise<Result<UploadRecord>> {
    if (rec.state !== "uploading" || rec.offset !== rec.length) return ok(rec);
    const finished = await this.finish(rec, now);
    if (finished) return ok(finished);
    return fail(
      "INTERNAL",
      "Every byte arrived, but completing the upload failed; send HEAD to retry completing it.",
    );
  }

  /** The stored state contradicts the part writer's invariant: refuse loudly, never store on top of it. */
  private broken(rec: UploadRecord, error: unknown): Failure {
    this.log("the upload's stored tail is inconsistent", rec.id, error);
    return fail("INTERNAL", "The upload's stored state is inconsistent; its bytes cannot be trusted.");
  }

  private log(message: string, upload: string, error: unknown) {
    console.error(JSON.stringify({ level: "error", message, upload, error: String(error) }));
  }

  /**
   * The last part (the tail), the multipart upload completed and its size checked against Upload-Length, the
   * media type sniffed from the stored bytes, upload.completed queued for a direct upload with a webhook.
   * Idempotent: a step that fails leaves the upload at offset = length, and the next HEAD, GET or PATCH
   * finishes it. Returns the complete record, or undefined when a step failed (logged).
   */
  private async finish(rec: UploadRecord, now: number): Promise<UploadRecord | undefined> {
    try {
      if (!this.kv.get<boolean>(ASSEMBLED)) {
        if (rec.length === 0) await this.env.FILES.put(rec.r2Key, new Uint8Array());
        else await this.assemble(rec);
        this.kv.put(ASSEMBLED, true);
      }
      const head =
        rec.length === 0
          ? null
          : await this.env.FILES.get(rec.r2Key, {
              range: { offset: 0, length: Math.min(SNIFF_BYTES, rec.length) },
            });
      const bytes = head ? new Uint8Array(await head.arrayBuffer()) : new Uint8Array();
      const done: UploadRecord = {
        ...rec,
        state: "complete",
        mediaType: mediaTypeOf(bytes),
        completedAt: now,
        expiresAt: now + rec.retentionMs,
      };
      await this.env.DB.prepare(
        "UPDATE uploads SET state = 'complete', media_type = ?, completed_at = ?, expires_at = ? WHERE id = ?",
      )
        .bind(done.mediaType, done.completedAt, done.expiresAt, done.id)
        .run();
      if (done.direct?.webhook) await this.notify(done, done.direct.webhook, now);
      for (const [key] of this.kv.list({ prefix: TAIL_PREFIX })) this.kv.delete(key);
      for (const [key] of this.kv.list({ prefix: PART_PREFIX })) this.kv.delete(key);
      this.save(done);
      await this.ctx.storage.setAlarm(done.expiresAt);
      return done;
    } catch (error) {
      this.log("finishing an upload failed", rec.id, error);
      return undefined;
    }
  }

  /** The tail as the last part, then R2's multipart upload completed from exactly the parts 1 … n. */
  private async assemble(rec: UploadRecord) {
    const multipart = this.env.FILES.resumeMultipartUpload(rec.r2Key, rec.multipartId);
    const last = readTail(this.parts, rec.offset, rec.partSize);
    if (last.byteLength > 0) {
      this.parts.putPart(await multipart.uploadPart(Math.floor(rec.offset / rec.partSize) + 1, last));
    }
    const parts = [...this.kv.list<string>({ prefix: PART_PREFIX })].map(([key, etag]) => ({
      partNumber: Number(key.slice(PART_PREFIX.length)),
      etag,
    }));
    const expected = Math.ceil(rec.length / rec.partSize);
    if (parts.length !== expected || parts.some((part, i) => part.partNumber !== i + 1))
      throw new TailCorrupt(
        `parts ${parts.map((p) => p.partNumber).join(",")} stored; 1…${expected} expected`,
      );
    const object = await multipart.complete(parts);
    if (object.size !== rec.length)
      throw new Error(`the assembled object has ${object.size} bytes; Upload-Length is ${rec.length}`);
  }

  /** upload.completed to the direct upload's webhook: recorded and queued once (enqueueUploadWebhook). */
  private async notify(rec: UploadRecord, webhookUrl: string, now: number) {
    await enqueueUploadWebhook(
      {
        db: createDb(this.env.DB),
        queue: this.env.WEBHOOK_QUEUE as Queue<WebhookMessage>,
        now,
        firstDelaySeconds: getConfig(this.env).webhookRetryDelaysSeconds[0] ?? 0,
      },
      { id: rec.id, webhookUrl },
      "upload.completed",
      JSON.stringify(serializeUpload(rec)),
    );
  }

  /** DELETE (tus termination): the bytes go at once; the upload answers 404 from then on. */
  async terminate(actor: Actor, now: number): Promise<Result<null>> {
    const refused = checkAccess(this.record(), actor, now);
    if (refused) return refused;
    await this.discard("deleted");
    return ok(null);
  }

  /** At expiry: an incomplete upload's multipart upload is aborted, a complete one's object deleted. */
  override async alarm() {
    const record = this.record();
    if (!record || record.state === "expired" || record.state === "deleted") return;
    if (Date.now() < record.expiresAt) {
      await this.ctx.storage.setAlarm(record.expiresAt);
      return;
    }
    await this.discard("expired");
  }

  private async discard(state: "expired" | "deleted") {
    // A PATCH in flight is stopped and finishes first, so its commit cannot land after the discard.
    while (this.writing) {
      this.stopWriting?.();
      await this.writing;
    }
    const rec = this.record();
    if (!rec || rec.state === "expired" || rec.state === "deleted") return;
    if (rec.state === "uploading" && rec.multipartId) {
      await this.env.FILES.resumeMultipartUpload(rec.r2Key, rec.multipartId)
        .abort()
        .catch(() => {});
    }
    if (rec.state !== "pending") await this.env.FILES.delete(rec.r2Key);
    for (const [key] of this.kv.list({ prefix: TAIL_PREFIX })) this.kv.delete(key);
    for (const [key] of this.kv.list({ prefix: PART_PREFIX })) this.kv.delete(key);
    this.save({ ...rec, state });
    await this.ctx.storage.deleteAlarm();
    await this.setRowState(rec.id, state);
  }

  private async setRowState(id: string, state: "expired" | "deleted") {
    await this.env.DB.prepare("UPDATE uploads SET state = ? WHERE id = ?").bind(state, id).run();
  }
}
