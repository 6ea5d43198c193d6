/**
 * How an upload's bytes become R2 multipart parts (docs/decisions.md "Uploads (tus 1.0.0)"), as one invariant:
 *
 *   With P the part size, C the stored chunk size and `offset` the bytes committed, part n (1-based) is in R2,
 *   its etag recorded, for every n ≤ ⌊offset / P⌋; the unfinished part's `offset mod P` bytes are the tail,
 *   kept in the upload object's storage as chunks k = 0 … ⌈tail / C⌉ − 1, chunk k holding bytes
 *   [k·C, min((k+1)·C, tail)) of that part.
 *
 * A part goes to R2 the moment it is full, so the tail is always shorter than a part and the parts are exactly
 * the file's whole P-byte pieces, whatever the client's chunk sizes. A PATCH is a session: it begins at the
 * committed offset, appends, and either commits (one synchronous run of storage writes, restoring the
 * invariant at the new offset) or leaves nothing behind. Every stored chunk is checked against the invariant
 * when it is read back; one that does not fit throws (TailCorrupt) instead of being patched over, so a bug
 * here fails a write loudly instead of storing the wrong bytes.
 */

/** The unfinished part is stored in values of at most 1 MiB (a stored value's limit is 2 MB). */
export const TAIL_CHUNK = 1024 * 1024;

/** The upload object's storage, as the part writer uses it: tail chunks and the etags of parts in R2. */
export interface PartStore {
  getChunk(index: number): Uint8Array | undefined;
  putChunk(index: number, bytes: Uint8Array): void;
  deleteChunk(index: number): void;
  putPart(part: R2UploadedPart): void;
}

/** Uploads part `partNumber` (1-based) to R2; what the multipart upload's uploadPart answers. */
export type PartSink = (partNumber: number, bytes: Uint8Array) => Promise<R2UploadedPart>;

/** A stored tail chunk that does not hold what the invariant says: the upload's state is not trusted. */
export class TailCorrupt extends Error {
  override name = "TailCorrupt";
}

/** R2 refused a part: the bytes of that part were not stored. */
export class PartStoreFailed extends Error {
  override name = "PartStoreFailed";
}

const chunks = (bytes: number, chunkSize: number) => Math.ceil(bytes / chunkSize);

/**
 * The tail of the part that `offset` is in, read back whole and checked: `offset mod P` bytes. The last part
 * at completion, and what a session needs when it fills the part.
 */
export function readTail(store: PartStore, offset: number, partSize: number, chunkSize = TAIL_CHUNK) {
  const tail = offset % partSize;
  const out = new Uint8Array(tail);
  for (let k = 0; k < chunks(tail, chunkSize); k++) loadChunk(store, out, k, tail, chunkSize);
  if (store.getChunk(chunks(tail, chunkSize)) !== undefined)
    throw new TailCorrupt(`a tail chunk past ${tail} bytes is stored`);
  return out;
}

function loadChunk(store: PartStore, into: Uint8Array, k: number, tail: number, chunkSize: number) {
  const want = Math.min(chunkSize, tail - k * chunkSize);
  const chunk = store.getChunk(k);
  if (!chunk || chunk.byteLength !== want)
    throw new TailCorrupt(
      `tail chunk ${k} holds ${chunk?.byteLength ?? "no"} bytes; ${want} expected for a ${tail}-byte tail`,
    );
  into.set(chunk, k * chunkSize);
}

/**
 * One PATCH's bytes appended at the committed `offset`. Memory: one part-sized buffer. Of the stored tail only
 * the last, partial chunk is read at the start (it is rewritten with the new bytes behind it); the rest is read
 * only if this session fills the part and must send it whole.
 */
export class PartSession {
  private readonly buffer: Uint8Array;
  /** File offset of the buffer's first byte: the start of the part being filled. */
  private partStart: number;
  /** Bytes of the current part held (in the buffer, or for the session's first part partly still in storage). */
  private fill: number;
  /** The stored tail at the start (bytes of the first part already in storage). */
  private readonly storedTail: number;
  /** Whether the stored tail's whole chunks (0 … ⌊storedTail / C⌋ − 1) are in the buffer too. */
  private headLoaded: boolean;
  private readonly parts: R2UploadedPart[] = [];
  private readonly store: PartStore;
  /** The committed offset the session began at. */
  readonly start: number;
  private readonly partSize: number;
  private readonly sink: PartSink;
  private readonly chunkSize: number;

  constructor(store: PartStore, start: number, partSize: number, sink: PartSink, chunkSize = TAIL_CHUNK) {
    this.store = store;
    this.start = start;
    this.partSize = partSize;
    this.sink = sink;
    this.chunkSize = chunkSize;
    this.buffer = new Uint8Array(partSize);
    this.partStart = start - (start % partSize);
    this.fill = start % partSize;
    this.storedTail = this.fill;
    const partial = Math.floor(this.storedTail / chunkSize);
    if (this.storedTail % chunkSize !== 0) loadChunk(store, this.buffer, partial, this.storedTail, chunkSize);
    this.headLoaded = partial === 0;
  }

  /** The offset the bytes appended so far reach. */
  get offset() {
    return this.partStart + this.fill;
  }

  /** Appends `bytes`; every part it fills goes to R2 at once (PartStoreFailed if R2 refuses it). */
  async write(bytes: Uint8Array) {
    let at = 0;
    while (at < bytes.byteLength) {
      const n = Math.min(bytes.byteLength - at, this.partSize - this.fill);
      this.buffer.set(bytes.subarray(at, at + n), this.fill);
      this.fill += n;
      at += n;
      if (this.fill === this.partSize) await this.flush();
    }
  }

  private async flush() {
    if (!this.headLoaded) {
      for (let k = 0; k < Math.floor(this.storedTail / this.chunkSize); k++)
        loadChunk(this.store, this.buffer, k, this.storedTail, this.chunkSize);
      this.headLoaded = true;
    }
    const partNumber = this.partStart / this.partSize + 1;
    let part: R2UploadedPart;
    try {
      part = await this.sink(partNumber, this.buffer);
    } catch (error) {
      throw new PartStoreFailed(`R2 refused part ${partNumber}: ${String(error)}`, { cause: error });
    }
    this.parts.push(part);
    this.partStart += this.partSize;
    this.fill = 0;
  }

  /**
   * Makes the bytes appended so far the upload's (synchronous: no reader sees half of it), and returns the new
   * committed offset. After a PartStoreFailed, only what R2 took counts: the parts uploaded before the failure
   * (the offset then ends at a part boundary, with no tail), or nothing at all if none was.
   */
  commit(afterStoreFailure = false): number {
    if (afterStoreFailure) {
      if (this.parts.length === 0) return this.start;
      this.fill = 0;
    }
    const oldChunks = chunks(this.storedTail, this.chunkSize);
    const newChunks = chunks(this.fill, this.chunkSize);
    const samePart = this.parts.length === 0;
    // In the same part, the chunks before the stored tail's partial one are unchanged; after a part went to R2
    // every chunk belongs to the new part.
    const firstDirty = samePart ? Math.floor(this.storedTail / this.chunkSize) : 0;
    for (const part of this.parts) this.store.putPart(part);
    for (let k = firstDirty; k < newChunks; k++) {
      const from = k * this.chunkSize;
      this.store.putChunk(k, this.buffer.slice(from, Math.min(from + this.chunkSize, this.fill)));
    }
    for (let k = newChunks; k < oldChunks; k++) this.store.deleteChunk(k);
    return this.offset;
  }
}
