/**
 * A source being downloaded into the job's temp directory. Processing does not wait for the whole file:
 * ffprobe/ffmpeg read it through the loopback relay (relay.ts), which serves byte ranges as soon as they
 * are on disk. A probe or a cover at 1 s of a faststart MP4 therefore needs only the first megabytes,
 * while a file whose index sits at the end simply waits for it. Memory stays flat: bytes go from the
 * socket to disk, and from disk to ffmpeg, in small chunks.
 *
 * The download runs at most LIMITS.downloadAheadBytes ahead of what readers have asked for, so a cover of
 * a 4 GiB file does not fetch 4 GiB, and a long encode is not slowed by a download it does not need yet. The
 * lead starts at LIMITS.downloadLeadBytes and grows with what readers have read, so a probe fetches little
 * more than the head it reads. What they have read is what the relay has sent them: it answers in bounded
 * parts (relay.ts), since loopback TCP would take megabytes more than ffmpeg reads.
 * While it waits on purpose the read timeout is off; it comes back as soon as bytes are wanted again.
 *
 * A reader that jumps far beyond the download (ffmpeg seeking to the middle of a file whose index is at
 * the start: a trim, a cover at a late time) need not wait for everything before: when the source said it
 * serves byte ranges, `openRange` asks it again for just that part, through the same guarded fetcher
 * (address checks, redirects re-checked, timeouts, the job's signal), and checks that the answer is
 * exactly that part of the same-sized file. Those bytes go straight to the reader, not to disk. A job may
 * do this a bounded number of times and for at most its source cap in bytes; then readers wait for the
 * download as before.
 */
import { closeSync, createWriteStream, openSync, readSync } from "node:fs";
import { open } from "node:fs/promises";
import type { Readable } from "node:stream";
import { EngineError } from "../protocol.ts";
import { classifyBodyError, type OpenedSource } from "../security/fetcher.ts";
import { describeBytes, LIMITS } from "../security/limits.ts";

const READ_CHUNK = 1024 * 1024;
/**
 * Received bytes are written to disk in batches of about this size (one writev each): a write per 64 KiB
 * socket read cost ~3 ms of CPU per MB here (each a round trip to libuv's thread pool), batches ~0.8 ms.
 */
const WRITE_BATCH = 1024 * 1024;
/**
 * Reads up to this size (sniffing, box headers, the MP4 index) are synchronous: those bytes are in the page
 * cache, so the read takes microseconds, where a thread-pool round trip (open, read, close) took 4–18 ms
 * here while the download was writing.
 */
const SYNC_READ_MAX = 1024 * 1024;

/** A reader this far beyond the bytes received gets a ranged request of its own instead of waiting. */
export const RANGE_GAP_BYTES = 8 * 1024 * 1024;
/** How far the download runs ahead of its readers while a ranged request streams. */
const RANGE_READER_AHEAD = 1024 * 1024;
/** Ranged requests one source may make. */
const MAX_RANGE_REQUESTS = 16;

/** Opens bytes [start, end] of the source again (openSource with a range). */
export type RangeOpener = (range: { start: number; end: number; ifRange?: string }) => Promise<OpenedSource>;

export class SourceDownload {
  readonly path: string;
  readonly declaredBytes: number | null;
  readonly finalUrl: URL;
  /** Bytes safely on disk. */
  written = 0;
  done = false;
  error: EngineError | null = null;
  /** Failure of a ranged request (see openRange); explains a failed run like `error` does. */
  rangeError: EngineError | null = null;
  /**
   * Set when a reader (ffmpeg/ffprobe through the relay) got less than it asked for because the source
   * failed. ffmpeg takes such a short read for the end of the file and may exit 0 with a truncated
   * output, so a job whose reader was cut short fails with this error even when its process succeeded.
   */
  readerCutShort: EngineError | null = null;
  private received = 0;
  private readonly maxBytes: number;
  private openRangeOf: RangeOpener | null;
  private readonly validator: string | undefined;
  private rangeRequests = 0;
  private rangeBytes = 0;
  private rangeReaders = 0;
  private readonly released = new WeakSet<Readable>();
  private readonly rangeGapBytes: number;
  /** Descriptor for `read`, opened on first use, closed by `destroy`. */
  private readFd: number | null = null;
  private destroyed = false;
  /** Furthest byte any reader has asked for. */
  private demand = 0;
  private diskBusy = false;
  private paused = false;
  private holding = false;
  private notify: () => void = () => {};
  /** Writes the bytes received but not yet written soon (a reader waits for them). */
  private flushSoon: () => void = () => {};
  private changed: Promise<void>;
  private readonly opened: OpenedSource;
  private readonly closeFile: () => void;

  private readonly aheadBytes: number;
  private readonly leadBytes: number;

  /**
   * `aheadBytes`: how far the download may run ahead of what readers asked for; `leadBytes`: how far ahead it
   * may run before they have read more than that (the lead grows with what they read, up to `aheadBytes`).
   */
  constructor(
    opened: OpenedSource,
    path: string,
    maxBytes: number,
    aheadBytes: number = LIMITS.downloadAheadBytes,
    ranges: { open: RangeOpener; gapBytes?: number } | null = null,
    leadBytes: number = LIMITS.downloadLeadBytes,
  ) {
    this.rangeGapBytes = ranges?.gapBytes ?? RANGE_GAP_BYTES;
    this.aheadBytes = aheadBytes;
    this.leadBytes = leadBytes;
    this.maxBytes = maxBytes;
    const headers = opened.response.headers;
    const acceptsRanges =
      opened.response.statusCode === 200 &&
      opened.contentLength !== null &&
      /\bbytes\b/i.test(String(headers["accept-ranges"] ?? ""));
    this.openRangeOf = acceptsRanges ? (ranges?.open ?? null) : null;
    // If-Range: a strong ETag, else Last-Modified, so a file that changed meanwhile is never mixed in.
    const etag = headers.etag;
    this.validator = etag !== undefined && !etag.startsWith("W/") ? etag : headers["last-modified"];
    this.opened = opened;
    this.path = path;
    this.declaredBytes = opened.contentLength;
    this.finalUrl = opened.url;
    this.changed = this.nextChange();
    const res = opened.response;
    const file = createWriteStream(path, { flags: "wx" });
    this.closeFile = () => file.destroy();
    let ended = false;
    file.on("error", (err) =>
      this.fail(new EngineError("INTERNAL", "could not store the source", { internal: String(err) })),
    );
    let batch: Buffer[] = [];
    let batchBytes = 0;
    let flushing = false;
    const flush = () => {
      flushing = false;
      if (batchBytes === 0 || this.error !== null) return;
      const bytes = batchBytes;
      const chunks = batch;
      batch = [];
      batchBytes = 0;
      // Corked, the chunks go to disk in one writev.
      file.cork();
      for (const chunk of chunks.slice(0, -1)) file.write(chunk);
      const ok = file.write(chunks.at(-1)!, (err) => {
        if (err) return;
        this.written += bytes;
        this.wake();
      });
      file.uncork();
      if (!ok) {
        this.diskBusy = true;
        file.once("drain", () => {
          this.diskBusy = false;
          this.flow();
        });
      }
    };
    // A reader waiting for bytes still in the batch gets them after this turn of the event loop (bytes that
    // arrived in the same turn are written with them).
    this.flushSoon = () => {
      if (flushing || batchBytes === 0) return;
      flushing = true;
      setImmediate(flush);
    };
    res.on("data", (chunk: Buffer) => {
      this.received += chunk.length;
      if (this.received > maxBytes) {
        this.fail(
          new EngineError(
            "REQUEST_BODY_TOO_LARGE",
            `the source is larger than the limit of ${describeBytes(maxBytes)}`,
          ),
        );
        return;
      }
      batch.push(chunk);
      batchBytes += chunk.length;
      if (batchBytes >= WRITE_BATCH) flush();
      // A reader waits for bytes that are here now (not one waiting for the whole file).
      else if (this.written < this.demand && this.demand <= this.received) this.flushSoon();
      this.flow();
    });
    res.on("end", () => {
      ended = true;
      flush();
      file.end(() => {
        if (this.error !== null) return;
        if (this.declaredBytes !== null && this.written < this.declaredBytes) {
          this.fail(
            new EngineError(
              "SOURCE_UNREACHABLE",
              "the source closed the connection before sending the whole file",
            ),
          );
          return;
        }
        this.done = true;
        this.wake();
      });
    });
    res.on("error", (err) => this.fail(classifyBodyError(err)));
    res.on("close", () => {
      if (!ended) {
        this.fail(new EngineError("SOURCE_UNREACHABLE", "the connection to the source was closed early"));
      }
    });
  }

  /** Bytes received from the source so far (on disk or about to be). */
  get receivedBytes(): number {
    return this.received;
  }

  /** Pauses the socket while the disk is busy or the download is far enough ahead of its readers. */
  private flow(): void {
    if (this.done || this.error !== null) return;
    const res = this.opened.response;
    // The lead grows with what readers have asked for (from `leadBytes`); while ranged readers stream from
    // the source itself, the download runs only a little ahead.
    const lead = Math.min(this.aheadBytes, Math.max(this.leadBytes, this.demand));
    const aheadBytes = this.rangeReaders > 0 ? Math.min(lead, RANGE_READER_AHEAD) : lead;
    const ahead = this.received >= this.demand + aheadBytes;
    // Waiting on purpose is not a stalled source: no read timeout while we hold the download back.
    if (ahead !== this.holding) {
      this.holding = ahead;
      res.socket?.setTimeout(ahead ? 0 : this.opened.readTimeoutMs);
    }
    const pause = this.diskBusy || ahead;
    if (pause !== this.paused) {
      this.paused = pause;
      if (pause) res.pause();
      else res.resume();
    }
  }

  private nextChange(): Promise<void> {
    return new Promise((resolve) => {
      this.notify = resolve;
    });
  }

  private wake(): void {
    const notify = this.notify;
    this.changed = this.nextChange();
    notify();
  }

  private fail(err: EngineError): void {
    if (this.error !== null || this.done) return;
    this.error = err;
    this.opened.response.destroy();
    this.closeFile();
    this.wake();
  }

  /** Stops the download (job finished or aborted). Readers still waiting get `reason`. */
  destroy(reason: EngineError = new EngineError("INTERNAL", "the job ended")): void {
    if (!this.done) this.fail(reason);
    this.destroyed = true;
    if (this.readFd !== null) closeSync(this.readFd);
    this.readFd = null;
  }

  /** Resolves once `bytes` are on disk or the download has finished; throws the download's error. */
  async waitFor(bytes: number): Promise<void> {
    if (bytes > this.demand) {
      this.demand = bytes;
      this.flow();
    }
    if (this.written < bytes) this.flushSoon();
    while (this.written < bytes && !this.done) {
      if (this.error !== null) throw this.error;
      await this.changed;
    }
    if (this.error !== null && this.written < bytes) throw this.error;
  }

  /** Total size: the declared length, or (without one) the size once the download is complete. */
  async totalBytes(): Promise<number> {
    if (this.declaredBytes !== null) return this.declaredBytes;
    await this.waitFor(Number.POSITIVE_INFINITY);
    return this.written;
  }

  /** Waits for the whole file. */
  async complete(): Promise<number> {
    await this.waitFor(Number.POSITIVE_INFINITY);
    return this.written;
  }

  /** Reads up to `length` bytes at `offset`, waiting for them to arrive; fewer at the end of the file. */
  async read(offset: number, length: number): Promise<Uint8Array> {
    await this.waitFor(offset + length);
    const available = Math.max(0, Math.min(length, this.written - offset));
    if (available === 0) return new Uint8Array(0);
    if (available <= SYNC_READ_MAX && !this.destroyed) {
      this.readFd ??= openSync(this.path, "r");
      const buf = Buffer.allocUnsafe(available);
      return buf.subarray(0, readSync(this.readFd, buf, 0, available, offset));
    }
    const handle = await open(this.path, "r");
    try {
      const buf = Buffer.alloc(available);
      const { bytesRead } = await handle.read(buf, 0, available, offset);
      return buf.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }

  /** True when a read of [start, endInclusive] should get a ranged request of its own (see openRange). */
  wantsRange(start: number, endInclusive: number): boolean {
    return (
      this.openRangeOf !== null &&
      this.error === null &&
      !this.done &&
      start > this.received + this.rangeGapBytes &&
      this.rangeRequests < MAX_RANGE_REQUESTS &&
      this.rangeBytes + (endInclusive - start + 1) <= this.maxBytes
    );
  }

  /**
   * Bytes [start, endInclusive] fetched again with a ranged request, or null when the source does not
   * answer with exactly that part of the same file (the caller then reads from the download; so does
   * every later reader once one ranged request failed). The answer must declare its length (so no more
   * than that is ever read); its bytes count against a budget of the source cap. The read timeout applies only while the reader wants bytes, as for the download; while a
   * ranged reader is active the download itself fetches only what readers ask for.
   */
  async openRange(start: number, endInclusive: number): Promise<Readable | null> {
    if (this.openRangeOf === null) return null;
    this.rangeRequests++;
    const end = endInclusive;
    let opened: OpenedSource;
    try {
      opened = await this.openRangeOf({
        start,
        end,
        ...(this.validator === undefined ? {} : { ifRange: this.validator }),
      });
    } catch {
      this.openRangeOf = null;
      return null;
    }
    const res = opened.response;
    const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(res.headers["content-range"] ?? ""));
    const last = Number(m?.[2]);
    if (
      res.statusCode !== 206 ||
      m === null ||
      Number(m[1]) !== start ||
      last !== end ||
      Number(m[3]) !== this.declaredBytes ||
      opened.contentLength !== last - start + 1
    ) {
      res.destroy();
      this.openRangeOf = null; // the source does not do ranges as it said: readers use the download
      return null;
    }
    this.rangeReaders++;
    this.flow();
    // Idle timeout only while the reader takes bytes (not while it holds the stream paused).
    const socket = res.socket;
    socket.setTimeout(0);
    let idle = 0;
    const watchdog = setInterval(() => {
      idle = res.isPaused() || res.readableLength > 0 ? 0 : idle + 1000;
      if (idle >= opened.readTimeoutMs) {
        res.destroy(new EngineError("SOURCE_UNREACHABLE", "the source stopped sending data (read timeout)"));
      }
    }, 1000);
    watchdog.unref();
    res.on("data", (chunk: Buffer) => {
      idle = 0;
      this.rangeBytes += chunk.length;
    });
    // The upstream failing (reset, closed early, the watchdog) cuts the reader short: the relay records
    // it and the job fails with it. The reader going away (releaseRange) is no failure.
    res.on("error", (err) => {
      if (this.released.has(res)) return;
      this.rangeError = err instanceof EngineError ? err : classifyBodyError(err);
      this.openRangeOf = null; // no more ranged requests to a source that failed one: use the download
    });
    res.on("end", () => {
      this.rangeError = null;
    });
    res.on("close", () => {
      clearInterval(watchdog);
      this.rangeReaders--;
      this.flow();
    });
    return res;
  }

  /** The reader of a ranged request went away: closing it is not a failure of the source. */
  releaseRange(stream: Readable): void {
    this.released.add(stream);
  }

  /** Streams bytes [start, endInclusive] as they arrive on disk. */
  async *stream(start: number, endInclusive: number): AsyncGenerator<Buffer> {
    const handle = await open(this.path, "r");
    try {
      let pos = start;
      while (pos <= endInclusive) {
        await this.waitFor(pos + 1);
        const available = Math.min(this.written, endInclusive + 1) - pos;
        if (available <= 0) return; // download finished short of the range
        const buf = Buffer.allocUnsafe(Math.min(available, READ_CHUNK));
        const { bytesRead } = await handle.read(buf, 0, buf.length, pos);
        if (bytesRead === 0) return;
        pos += bytesRead;
        yield buf.subarray(0, bytesRead);
      }
    } finally {
      await handle.close();
    }
  }
}
