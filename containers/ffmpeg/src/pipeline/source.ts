/**
 * A source being downloaded into the job's temp directory. Processing does not wait for the whole file:
 * ffprobe/ffmpeg read it through the loopback relay (relay.ts), which serves byte ranges as soon as they
 * are on disk. A probe or a cover at 1 s of a faststart MP4 therefore needs only the first megabytes,
 * while a file whose index sits at the end simply waits for it. Memory stays flat: bytes go from the
 * socket to disk, and from disk to ffmpeg, in small chunks.
 *
 * The download runs at most LIMITS.downloadAheadBytes ahead of what readers have asked for, so a cover of
 * a 4 GiB file does not fetch 4 GiB, and a long encode is not slowed by a download it does not need yet.
 * While it waits on purpose the read timeout is off; it comes back as soon as bytes are wanted again.
 */
import { createWriteStream } from "node:fs";
import { open } from "node:fs/promises";
import { EngineError } from "../protocol.ts";
import { classifyBodyError, type OpenedSource } from "../security/fetcher.ts";
import { describeBytes, LIMITS } from "../security/limits.ts";

const READ_CHUNK = 1024 * 1024;

export class SourceDownload {
  readonly path: string;
  readonly declaredBytes: number | null;
  readonly finalUrl: URL;
  /** Bytes safely on disk. */
  written = 0;
  done = false;
  error: EngineError | null = null;
  private received = 0;
  /** Furthest byte any reader has asked for. */
  private demand = 0;
  private diskBusy = false;
  private paused = false;
  private holding = false;
  private notify: () => void = () => {};
  private changed: Promise<void>;
  private readonly opened: OpenedSource;
  private readonly closeFile: () => void;

  private readonly aheadBytes: number;

  /** `aheadBytes`: how far the download may run ahead of what readers asked for. */
  constructor(
    opened: OpenedSource,
    path: string,
    maxBytes: number,
    aheadBytes: number = LIMITS.downloadAheadBytes,
  ) {
    this.aheadBytes = aheadBytes;
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
      const ok = file.write(chunk, (err) => {
        if (err) return;
        this.written += chunk.length;
        this.wake();
      });
      if (!ok) {
        this.diskBusy = true;
        file.once("drain", () => {
          this.diskBusy = false;
          this.flow();
        });
      }
      this.flow();
    });
    res.on("end", () => {
      ended = true;
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
    const ahead = this.received >= this.demand + this.aheadBytes;
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
  }

  /** Resolves once `bytes` are on disk or the download has finished; throws the download's error. */
  async waitFor(bytes: number): Promise<void> {
    if (bytes > this.demand) {
      this.demand = bytes;
      this.flow();
    }
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
    const handle = await open(this.path, "r");
    try {
      const buf = Buffer.alloc(available);
      const { bytesRead } = await handle.read(buf, 0, available, offset);
      return buf.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
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
