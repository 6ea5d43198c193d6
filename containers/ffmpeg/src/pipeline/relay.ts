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

export class Relay {
  private readonly server: http.Server;
  private readonly sources = new Map<string, SourceDownload>();
  /** Reserved URLs whose source is not known yet: requests wait for `bind` (or `release`). */
  private readonly pending = new Map<string, Promise<SourceDownload | undefined>>();
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
    const token = /^\/s\/([0-9a-f]{48})$/.exec(req.url ?? "")?.[1];
    const source =
      token === undefined ? undefined : (this.sources.get(token) ?? (await this.pending.get(token)));
    if (source === undefined || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404).end();
      return;
    }
    let total: number;
    try {
      total = await source.totalBytes();
    } catch {
      res.writeHead(502).end();
      return;
    }
    const range = parseRange(req.headers.range, total);
    if (range === "invalid") {
      res.writeHead(416, { "content-range": `bytes */${total}` }).end();
      return;
    }
    const start = range?.start ?? 0;
    const end = range?.end ?? total - 1;
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
    // Bytes already on disk go out as a plain file stream (large chunks, least CPU); a range far beyond
    // the download is fetched again with a ranged request when the source allows it; any other range is
    // streamed as it arrives. A failed download (or ranged request) or a reader that went away ends the
    // response early. ffmpeg takes a short read for the end of the file, so a source failure under a
    // reader is recorded on the source and fails the job (speculate.ts runMediaJob).
    const ranged =
      source.written <= end && source.wantsRange(start, end) ? await source.openRange(start, end) : null;
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
}
