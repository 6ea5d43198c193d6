import { DurableObject } from "cloudflare:workers";
import { mediaTypeOf, SNIFF_BYTES } from "./media-type";
import { partSizeFor } from "./tus";

export type UploadState = "uploading" | "complete" | "expired" | "deleted";

/** One upload's state, kept in its object's storage: the single point of truth under concurrent PATCHes. */
export type UploadRecord = {
  id: string;
  accountId: string;
  length: number;
  /** Bytes received and kept: parts in R2 plus the unfinished part's bytes here. */
  offset: number;
  partSize: number;
  r2Key: string;
  multipartId: string;
  /** Bytes of the unfinished part held in this object's storage (offset − tailBytes is a part boundary). */
  tailBytes: number;
  state: UploadState;
  filename: string | null;
  metadata: string | null;
  mediaType: string | null;
  createdAt: number;
  completedAt: number | null;
  /** Incomplete: when it expires (creation + expiry). Complete: when it is deleted (completion + retention). */
  expiresAt: number;
  retentionMs: number;
};

export type Failure = {
  ok: false;
  code:
    | "RESOURCE_NOT_FOUND"
    | "RESOURCE_GONE"
    | "RESOURCE_CONFLICT"
    | "REQUEST_BODY_TOO_LARGE"
    | "CHECKSUM_MISMATCH"
    | "INTERNAL";
  detail: string;
};
export type Result<T> = { ok: true; value: T } | Failure;

export type CreateInput = {
  id: string;
  accountId: string;
  length: number;
  filename: string | null;
  metadata: string | null;
  now: number;
  expiryMs: number;
  retentionMs: number;
};

export type WriteInput = {
  accountId: string;
  offset: number;
  /** The body's Content-Length when the request declared one. */
  contentLength: number | null;
  /** Upload-Checksum's sha256 digest, when sent. */
  checksum: Uint8Array | null;
  now: number;
};

const RECORD = "record";
const TAIL_PREFIX = "tail:";
const PART_PREFIX = "part:";
/** The unfinished part is stored in values of at most 1 MiB (a stored value's limit is 2 MB). */
const TAIL_CHUNK = 1024 * 1024;
/** A PATCH waits this long for the one before it (an interrupted one saving what it got) before 409. */
const LOCK_WAIT_MS = 5_000;

const notFound: Failure = { ok: false, code: "RESOURCE_NOT_FOUND", detail: "The upload does not exist." };
const fail = (code: Failure["code"], detail: string): Failure => ({ ok: false, code, detail });
const ok = <T>(value: T): Result<T> => ({ ok: true, value });
const seq = (n: number) => n.toString().padStart(6, "0");

function equalBytes(a: Uint8Array, b: Uint8Array) {
  if (a.byteLength !== b.byteLength) return false;
  let diff = 0;
  for (let i = 0; i < a.byteLength; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/**
 * One object per tus upload (src/uploads, docs/decisions.md "Uploads"). It owns the upload's offset, its R2
 * multipart upload and the parts written so far. PATCHes are serialised here: one writes at a time, the next
 * waits for it and then has its Upload-Offset compared with the offset the first left, so two writers can never
 * both append at one offset.
 *
 * Bytes stream through in bounded memory: they fill one part-sized buffer (8 MiB, or larger in whole MiB for a
 * file past 80 GB), which goes to R2 as a part whenever full. A part is numbered by its position in the file,
 * so a rewrite after a refused PATCH replaces it. What a PATCH leaves short of a part boundary is kept in this
 * object's storage (the tail) until the next PATCH fills the part, or, at the end, goes as the last part.
 * Nothing a PATCH wrote counts until it commits: with a checksum, only when the digest matches; without one, an
 * interrupted PATCH keeps every byte that arrived (tus core), so HEAD then reports where to resume.
 *
 * A client resuming after a dropped connection sends HEAD, often before the server has seen the drop (its
 * PATCH still reading bytes buffered on the way, or a half-open connection sending nothing). HEAD therefore
 * asks a PATCH in progress to stop where it is, as tusd's lock-release requests do: that PATCH commits what it
 * has read and answers, and HEAD then reports the offset it left. DELETE and expiry stop it the same way.
 */
export class UploadObject extends DurableObject<Env> {
  private writing: Promise<void> | null = null;
  /** Stops the PATCH writing now at the bytes it has read: it commits them and releases the upload. */
  private stopWriting: (() => void) | null = null;

  private get kv() {
    return this.ctx.storage.kv;
  }

  private record(): UploadRecord | undefined {
    return this.kv.get<UploadRecord>(RECORD);
  }

  private save(record: UploadRecord) {
    this.kv.put(RECORD, record);
  }

  /** Unknown, another account's or deleted: the same 404, so nothing tells an upload exists. Expired: 410. */
  private check(record: UploadRecord | undefined, accountId: string, now: number): Failure | null {
    if (!record || record.accountId !== accountId || record.state === "deleted") return notFound;
    if (record.state === "expired" || now >= record.expiresAt)
      return fail("RESOURCE_GONE", "The upload has expired; its bytes were discarded.");
    return null;
  }

  async create(input: CreateInput): Promise<UploadRecord> {
    const existing = this.record();
    if (existing) throw new Error(`upload ${input.id} exists already`);
    const r2Key = `accounts/${input.accountId}/uploads/${input.id}`;
    const record: UploadRecord = {
      id: input.id,
      accountId: input.accountId,
      length: input.length,
      offset: 0,
      partSize: partSizeFor(input.length),
      r2Key,
      multipartId: "",
      tailBytes: 0,
      state: "uploading",
      filename: input.filename,
      metadata: input.metadata,
      mediaType: null,
      createdAt: input.now,
      completedAt: null,
      expiresAt: input.now + input.expiryMs,
      retentionMs: input.retentionMs,
    };
    if (input.length > 0) {
      record.multipartId = (await this.env.FILES.createMultipartUpload(r2Key)).uploadId;
    }
    this.save(record);
    await this.env.DB.prepare(
      "INSERT INTO uploads (id, account_id, size_bytes, filename, state, r2_key, created_at, expires_at) VALUES (?, ?, ?, ?, 'uploading', ?, ?, ?)",
    )
      .bind(
        record.id,
        record.accountId,
        record.length,
        record.filename,
        r2Key,
        record.createdAt,
        record.expiresAt,
      )
      .run();
    if (input.length === 0) return (await this.finish(record, input.now)) ?? record;
    await this.ctx.storage.setAlarm(record.expiresAt);
    return record;
  }

  /**
   * HEAD and GET: the current state (finishing an upload whose last step failed before). With `settle` (HEAD, a
   * client about to resume), a PATCH in progress is stopped first and its commit awaited (at most 5 s), so the
   * offset answered is where that client can resume, not the one before the bytes its dropped PATCH delivered.
   */
  async status(accountId: string, now: number, settle = false): Promise<Result<UploadRecord>> {
    if (settle && this.writing && this.check(this.record(), accountId, now) === null) {
      this.stopWriting?.();
      await Promise.race([this.writing, new Promise((resolve) => setTimeout(resolve, LOCK_WAIT_MS))]);
    }
    const record = this.record();
    const refused = this.check(record, accountId, now);
    if (refused) return refused;
    if (record!.state === "uploading" && record!.offset === record!.length && !this.writing) {
      const finished = await this.finish(record!, now);
      if (finished) return ok(finished);
    }
    return ok(record!);
  }

  async write(input: WriteInput, body: ReadableStream<Uint8Array> | null): Promise<Result<UploadRecord>> {
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
      const result = await this.writeLocked(input, body);
      if (!result.ok) await body?.cancel().catch(() => {});
      return result;
    } finally {
      this.writing = null;
      release();
    }
  }

  private async writeLocked(
    input: WriteInput,
    body: ReadableStream<Uint8Array> | null,
  ): Promise<Result<UploadRecord>> {
    const record = this.record();
    const refused = this.check(record, input.accountId, input.now);
    if (refused) return refused;
    const rec = record!;
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
    if (rec.state === "complete" || body === null) {
      if (rec.state === "uploading" && rec.offset === rec.length)
        return ok((await this.finish(rec, input.now)) ?? rec);
      return ok(rec);
    }

    const start = rec.offset;
    const buffer = new Uint8Array(rec.partSize);
    let fill = 0;
    for (const [, chunk] of this.kv.list<Uint8Array>({ prefix: TAIL_PREFIX })) {
      buffer.set(chunk, fill);
      fill += chunk.byteLength;
    }
    const storedTail = fill;
    let bufferStart = start - fill;
    let received = 0;
    let flushed = false;
    const parts: R2UploadedPart[] = [];
    const digest = input.checksum ? new crypto.DigestStream("SHA-256") : null;
    const hasher = digest?.getWriter();
    let interrupted = false;
    let storeError: unknown;
    let pastLength = false;
    const multipart = this.env.FILES.resumeMultipartUpload(rec.r2Key, rec.multipartId);
    const partNumber = () => Math.floor(bufferStart / rec.partSize) + 1;

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
        if (start + received + value.byteLength > rec.length) {
          pastLength = true;
          await reader.cancel().catch(() => {});
          break;
        }
        if (hasher) await hasher.write(value);
        let at = 0;
        while (at < value.byteLength) {
          if (fill === buffer.byteLength) {
            parts.push(await multipart.uploadPart(partNumber(), buffer));
            bufferStart += fill;
            fill = 0;
            flushed = true;
          }
          const n = Math.min(value.byteLength - at, buffer.byteLength - fill);
          buffer.set(value.subarray(at, at + n), fill);
          fill += n;
          at += n;
          received += n;
        }
      }
      // A full buffer at the end: one more part, unless it is the file's last (finish sends that one).
      if (fill === buffer.byteLength && start + received < rec.length) {
        parts.push(await multipart.uploadPart(partNumber(), buffer));
        bufferStart += fill;
        fill = 0;
        flushed = true;
      }
    } catch (error) {
      // The client went away (its body errors) or R2 refused a part: keep what arrived, unless checksummed.
      if (error instanceof Error && /R2|uploadPart/i.test(`${error.name} ${error.message}`))
        storeError = error;
      interrupted = true;
    } finally {
      this.stopWriting = null;
    }

    if (pastLength) return tooLarge;
    if (hasher && digest && input.checksum) {
      if (interrupted) {
        await hasher.abort().catch(() => {});
        return fail(
          "CHECKSUM_MISMATCH",
          "The PATCH ended before all its bytes arrived; none of them were kept.",
        );
      }
      await hasher.close();
      if (!equalBytes(new Uint8Array(await digest.digest), input.checksum))
        return fail(
          "CHECKSUM_MISMATCH",
          "The bytes of this PATCH do not match its Upload-Checksum (sha256); none of them were kept.",
        );
    }

    // Commit: the parts, the new tail, the offset — in one synchronous run, so no reader sees half of it.
    for (const part of parts) this.kv.put(`${PART_PREFIX}${seq(part.partNumber)}`, part.etag);
    if (flushed) {
      for (const [key] of this.kv.list({ prefix: TAIL_PREFIX })) this.kv.delete(key);
    }
    const from = flushed ? 0 : storedTail;
    let index = flushed ? 0 : Math.ceil(storedTail / TAIL_CHUNK);
    for (let at = from; at < fill; at += TAIL_CHUNK) {
      this.kv.put(`${TAIL_PREFIX}${seq(index++)}`, buffer.slice(at, Math.min(fill, at + TAIL_CHUNK)));
    }
    rec.offset = start + received;
    rec.tailBytes = fill;
    this.save(rec);
    if (storeError) {
      return fail("INTERNAL", "Storing the upload's bytes failed; send HEAD and resume from its offset.");
    }
    if (rec.offset === rec.length) return ok((await this.finish(rec, input.now)) ?? rec);
    return ok(rec);
  }

  /**
   * The last part (the tail), the multipart upload completed, the media type sniffed from the stored bytes.
   * Idempotent: a step that fails leaves the upload at offset = length, and the next HEAD, GET or PATCH
   * finishes it. Returns the complete record, or undefined when a step failed.
   */
  private async finish(rec: UploadRecord, now: number): Promise<UploadRecord | undefined> {
    try {
      if (rec.length === 0) {
        await this.env.FILES.put(rec.r2Key, new Uint8Array());
      } else {
        const multipart = this.env.FILES.resumeMultipartUpload(rec.r2Key, rec.multipartId);
        if (rec.tailBytes > 0) {
          const last = new Uint8Array(rec.tailBytes);
          let at = 0;
          for (const [, chunk] of this.kv.list<Uint8Array>({ prefix: TAIL_PREFIX })) {
            last.set(chunk, at);
            at += chunk.byteLength;
          }
          const part = await multipart.uploadPart(Math.floor((rec.length - 1) / rec.partSize) + 1, last);
          this.kv.put(`${PART_PREFIX}${seq(part.partNumber)}`, part.etag);
        }
        const parts = [...this.kv.list<string>({ prefix: PART_PREFIX })].map(([key, etag]) => ({
          partNumber: Number(key.slice(PART_PREFIX.length)),
          etag,
        }));
        await multipart.complete(parts);
      }
      const head =
        rec.length === 0
          ? null
          : await this.env.FILES.get(rec.r2Key, {
              range: { offset: 0, length: Math.min(SNIFF_BYTES, rec.length) },
            });
      const bytes = head ? new Uint8Array(await head.arrayBuffer()) : new Uint8Array();
      for (const [key] of this.kv.list({ prefix: TAIL_PREFIX })) this.kv.delete(key);
      for (const [key] of this.kv.list({ prefix: PART_PREFIX })) this.kv.delete(key);
      rec.state = "complete";
      rec.tailBytes = 0;
      rec.mediaType = mediaTypeOf(bytes);
      rec.completedAt = now;
      rec.expiresAt = now + rec.retentionMs;
      this.save(rec);
      await this.ctx.storage.setAlarm(rec.expiresAt);
      await this.env.DB.prepare(
        "UPDATE uploads SET state = 'complete', media_type = ?, completed_at = ?, expires_at = ? WHERE id = ?",
      )
        .bind(rec.mediaType, rec.completedAt, rec.expiresAt, rec.id)
        .run();
      return rec;
    } catch (error) {
      console.error(
        JSON.stringify({
          level: "error",
          message: "finishing an upload failed",
          upload: rec.id,
          error: String(error),
        }),
      );
      return undefined;
    }
  }

  /** DELETE (tus termination): the bytes go at once; the upload answers 404 from then on. */
  async terminate(accountId: string, now: number): Promise<Result<null>> {
    const record = this.record();
    const refused = this.check(record, accountId, now);
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
    await this.env.FILES.delete(rec.r2Key);
    for (const [key] of this.kv.list({ prefix: TAIL_PREFIX })) this.kv.delete(key);
    for (const [key] of this.kv.list({ prefix: PART_PREFIX })) this.kv.delete(key);
    rec.state = state;
    rec.tailBytes = 0;
    this.save(rec);
    await this.ctx.storage.deleteAlarm();
    await this.env.DB.prepare("UPDATE uploads SET state = ? WHERE id = ?").bind(state, rec.id).run();
  }
}
