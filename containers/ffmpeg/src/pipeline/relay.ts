/**
 * Loopback byte-range server through which ffmpeg reads sources that are still downloading. It listens on
 * 127.0.0.1 only and answers only unguessable per-job paths, so nothing but our own ffmpeg processes can
 * use it; ffmpeg is started with `-protocol_whitelist http,tcp` and the URL below as its only input.
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { EngineError } from "../protocol.ts";
import type { SourceDownload } from "./source.ts";

/**
 * A read from an offset of the download gets this much at first, and each read that continues one where it
 * ended twice the part before, up to MAX_PART: loopback TCP buffers several MB, so a response as long as
 * the file would take bytes from the download far faster than ffmpeg reads them, and the download, which
 * follows what was sent (source.ts), would fetch most of the file for a probe that reads 64 KB of it.
 * A reader that has read on through the parts up to MAX_PART (≈ 8 MiB) streams the file: it gets the rest
 * in one answer, since each part costs a streaming read time (measured: +10 % for an audio extraction of a
 * 117 MB file in parts of 4 MiB, docs/performance.md).
 */
const FIRST_PART = 256 * 1024;
const MAX_PART = 4 * 1024 * 1024;
/** Continuations remembered per source (a job has a few readers at a time). */
const MAX_CONTINUATIONS = 16;

function parseRange(
  header: string | undefined,
  total: number,
): { start: number; end: number } | null | "invalid" {
  if (header === undefined) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (m === null) return null; // multiple or odd ranges: serve the whole file
  const [, a = "", b = ""] = m;
  if (a === "" && b === "") return "invalid";
  if (a === "") {
    const suffix = Math.min(Number(b), total);
    return suffix === 0 ? "invalid" : { start: total - suffix, end: total - 1 };
  }
  const start = Number(a);
  const end = b === "" ? total - 1 : Math.min(Number(b), total - 1);
  return start >= total || end < start ? "invalid" : { start, end };
}

export interface RelaySlot {
  url: string;
  bind(source: SourceDownload): void;
  release(): void;
}

/** A relay URL's path: /s/ and its token, 24 random bytes in hex (`reserve`). */
const RELAY_PATH = /^\/s\/([0-9a-f]{48})$/;

/**
 * Whether `url` has the shape of a relay URL (any engine's, on loopback): bench/engine.ts finds the source
 * inputs of traced commands by it. A relay itself tells its own URLs by `names`.
 */
export function isRelayUrl(url: string): boolean {
  const path = /^http:\/\/127\.0\.0\.1:\d+(\/.*)$/.exec(url)?.[1];
  return path !== undefined && RELAY_PATH.test(path);
}

export class Relay {
  private readonly server: http.Server;
  private readonly sources = new Map<string, SourceDownload>();
  /** Reserved URLs whose source is not known yet: requests wait for `bind` (or `release`). */
  private readonly pending = new Map<string, Promise<SourceDownload | undefined>>();
  /** Per source: where a part sent ended (the next byte) → that part's size. */
  private readonly parts = new WeakMap<SourceDownload, Map<number, number>>();
  private base = "";

  constructor() {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch(() => res.destroy());
    });
    this.server.keepAliveTimeout = 5000;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** True when `arg` names a URL of this relay. */
  names(arg: string): boolean {
    return this.base !== "" && arg.startsWith(`${this.base}/`);
  }

  /** Makes a source readable at a fresh URL until `release` is called. */
  register(source: SourceDownload): { url: string; release: () => void } {
    const slot = this.reserve();
    slot.bind(source);
    return { url: slot.url, release: slot.release };
  }

  /**
   * A fresh URL for a source that comes later (a warm ffprobe or ffmpeg waits on it, warm-probe.ts,
   * warm-ffmpeg.ts): requests to it
   * wait until `bind`; after `release` they, and any still waiting, get 404.
   */
  reserve(): RelaySlot {
    const token = randomBytes(24).toString("hex");
    let settle: (source: SourceDownload | undefined) => void = () => {};
    this.pending.set(token, new Promise((resolve) => (settle = resolve)));
    return {
      url: `${this.base}/s/${token}`,
      bind: (source) => {
        if (this.pending.delete(token)) this.sources.set(token, source);
        settle(source);
      },
      release: () => {
        this.pending.delete(token);
        this.sources.delete(token);
        settle(undefined);
      },
    };
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const token = RELAY_PATH.exec(req.url ?? "")?.[1];
    const source =
      token === undefined ? undefined : (this.sources.get(token) ?? (await this.pending.get(token)));
    if (source === undefined || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404).end();
      return;
    }
    // Once the source has failed under a reader, ffmpeg's next request (-reconnect) is refused: it ends on
    // the short read, and the job with the source's error. (Bytes already on disk are still served after the
    // download itself failed; a read beyond them fails below and counts as cut short.)
    if (source.readerCutShort !== null) {
      res.writeHead(502).end();
      return;
    }
    let total: number;
    try {
      total = await source.totalBytes();
    } catch {
      source.readerCutShort ??= source.error;
      res.writeHead(502).end();
      return;
    }
    const range = parseRange(req.headers.range, total);
    if (range === "invalid") {
      res.writeHead(416, { "content-range": `bytes */${total}` }).end();
      return;
    }
    const start = range?.start ?? 0;
    const wanted = range?.end ?? total - 1;
    // A read far beyond the download is fetched again with a ranged request when the source allows it.
    const fromOrigin = source.written <= wanted && source.wantsRange(start, wanted);
    // A ranged read of the download gets a bounded part; ffmpeg (-reconnect) asks for the next at its end.
    const end = range === null || fromOrigin ? wanted : this.partEnd(source, start, wanted);
    const headers: http.OutgoingHttpHeaders = {
      "accept-ranges": "bytes",
      "content-type": "application/octet-stream",
      "content-length": Math.max(0, end - start + 1),
    };
    if (range !== null) headers["content-range"] = `bytes ${start}-${end}/${total}`;
    res.writeHead(range === null ? 200 : 206, headers);
    if (req.method === "HEAD" || total === 0) {
      res.end();
      return;
    }
    // Bytes already on disk go out as a plain file stream (large chunks, least CPU); any other range is
    // streamed as it arrives. A failed download (or ranged request) or a reader that went away ends the
    // response early and is recorded on the source; ffmpeg asks once more (-reconnect), is refused (above) and
    // takes the short read for the end of the file, and the job fails with the source's error (speculate.ts
    // runMediaJob).
    const ranged = fromOrigin ? await source.openRange(start, end) : null;
    const body =
      source.written > end
        ? createReadStream(source.path, { start, end, highWaterMark: 1024 * 1024 })
        : (ranged ?? Readable.from(source.stream(start, end)));
    let readerGone = false;
    res.once("close", () => {
      if (res.writableFinished || body.errored) return;
      // The reader left (it had what it needed): closing the ranged request now is not a source failure.
      readerGone = true;
      if (ranged !== null) source.releaseRange(ranged);
    });
    await pipeline(body, res).catch((err: unknown) => {
      res.destroy();
      if (readerGone) return;
      const failure = err instanceof EngineError ? err : ranged !== null ? source.rangeError : null;
      if (failure !== null) source.readerCutShort ??= failure;
    });
  }

  /** The last byte of the part a read of `source` from `start` gets (`wanted` once it streams). */
  private partEnd(source: SourceDownload, start: number, wanted: number): number {
    const parts = this.parts.get(source) ?? new Map<number, number>();
    this.parts.set(source, parts);
    const before = parts.get(start);
    parts.delete(start);
    const size = before === undefined ? FIRST_PART : 2 * before;
    const end = size > MAX_PART ? wanted : Math.min(wanted, start + size - 1);
    if (parts.size >= MAX_CONTINUATIONS) parts.delete(parts.keys().next().value as number);
    parts.set(end + 1, size);
    return end;
  }
}
