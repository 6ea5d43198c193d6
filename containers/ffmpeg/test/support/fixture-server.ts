/**
 * The stand-in for "the public internet": a 127.0.0.1 server that serves the generated media and
 * misbehaves on demand.
 *
 *   /media/<name>              the file, with Content-Length
 *   /chunked/<name>            the file without Content-Length
 *   /slow/<name>?kbps=<n>      the file, throttled (forces the relay path)
 *   /redirect?to=<url>         302 to <url>
 *   /chain/<n>/<name>          n redirects, then /media/<name>
 *   /status/<code>             an empty answer with that status
 *   /hang                      accepts and never answers
 *   /stall/<name>              headers and 64 KiB of the file, then nothing
 *   /short/<name>              declares the full length, sends half, closes
 *   /huge                      declares 5 GiB
 *   /endless[/<name>]          the file (if named), then zeros without end and without Content-Length
 *   /ranged/<name>?kbps=<n>    Accept-Ranges: bytes; whole-file answers throttled like /slow, Range
 *                              requests answered 206 at full speed (counted per `tag`); `lie=1` ignores
 *                              Range (200, the whole file), `cut=1` ends each 206 after half its bytes,
 *                              `hang=1` sends 206 headers and 64 KiB, then nothing; `trickle=1` makes the
 *                              whole-file answer a download that never ends (see `trickle`)
 *   /ranged-stats?tag=<t>      {"ranged": <206 answers given for that tag>}
 */
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

export interface FixtureServer {
  port: number;
  url(pathname: string): string;
  close(): Promise<void>;
}

/**
 * Sends the first 256 KiB of a file, then 1 KiB every 500 ms: a download that never finishes within a test
 * and is never idle long enough to trip a read timeout, whatever the machine's load.
 */
function trickle(res: http.ServerResponse, file: string): void {
  const head = 256 * 1024;
  let offset = 0;
  let timer: NodeJS.Timeout | undefined;
  let gone = false;
  const send = (length: number) => {
    const stream = createReadStream(file, { start: offset, end: offset + length - 1 });
    offset += length;
    stream.on("data", (chunk) => res.write(chunk));
    // Not once the client has gone: a client that hangs up while a piece is being read would otherwise leave a
    // timer sending to nobody forever, and keep vitest's main process, where this server runs, alive.
    stream.on("end", () => {
      if (!gone) timer = setTimeout(() => send(1024), 500);
    });
  };
  send(head);
  res.on("close", () => {
    gone = true;
    clearTimeout(timer);
  });
}

/** Sends a file throttled to about `kbps` KiB/s (20 ms ticks). */
function sendThrottled(res: http.ServerResponse, file: string, kbps: number): void {
  const bytesPerTick = Math.max(1024, Math.round((kbps * 1024) / 50));
  const stream = createReadStream(file, { highWaterMark: bytesPerTick });
  stream.on("data", (chunk) => {
    stream.pause();
    res.write(chunk);
    setTimeout(() => stream.resume(), 20);
  });
  stream.on("end", () => res.end());
  res.on("close", () => stream.destroy());
}

/** `host`: where it listens (test:container serves it on an address of its network namespace). */
export async function startFixtureServer(dir: string, host = "127.0.0.1"): Promise<FixtureServer> {
  const sockets = new Set<import("node:net").Socket>();
  const rangedAnswers = new Map<string, number>();
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://fixtures");
    const parts = url.pathname.split("/").filter(Boolean);
    const file = (name: string | undefined) => path.join(dir, path.basename(name ?? ""));
    try {
      switch (parts[0]) {
        case "media": {
          const { size } = await stat(file(parts[1]));
          res.writeHead(200, { "content-length": size, "content-type": "application/octet-stream" });
          createReadStream(file(parts[1])).pipe(res);
          return;
        }
        case "chunked": {
          await stat(file(parts[1]));
          res.writeHead(200, { "content-type": "video/mp4" });
          createReadStream(file(parts[1])).pipe(res);
          return;
        }
        case "slow": {
          const { size } = await stat(file(parts[1]));
          const bytesPerTick = Math.max(
            1024,
            Math.round((Number(url.searchParams.get("kbps") ?? 2000) * 1024) / 50),
          );
          res.writeHead(200, { "content-length": size });
          const stream = createReadStream(file(parts[1]), { highWaterMark: bytesPerTick });
          stream.on("data", (chunk) => {
            stream.pause();
            res.write(chunk);
            setTimeout(() => stream.resume(), 20);
          });
          stream.on("end", () => res.end());
          res.on("close", () => stream.destroy());
          return;
        }
        case "ranged": {
          const name = file(parts[1]);
          const { size } = await stat(name);
          const tag = url.searchParams.get("tag") ?? "";
          const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
          if (m !== null && url.searchParams.get("lie") !== "1") {
            rangedAnswers.set(tag, (rangedAnswers.get(tag) ?? 0) + 1);
            const start = Number(m[1]);
            const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
            res.writeHead(206, {
              "content-length": end - start + 1,
              "content-range": `bytes ${start}-${end}/${size}`,
              "accept-ranges": "bytes",
            });
            if (url.searchParams.get("hang") === "1") {
              createReadStream(name, { start, end: Math.min(end, start + 65535) }).on("data", (c) =>
                res.write(c),
              );
            } else if (url.searchParams.get("cut") === "1") {
              const half = start + Math.floor((end - start) / 2);
              createReadStream(name, { start, end: half })
                .on("end", () => res.destroy())
                .pipe(res, { end: false });
            } else {
              createReadStream(name, { start, end }).pipe(res);
            }
            return;
          }
          res.writeHead(200, { "content-length": size, "accept-ranges": "bytes" });
          if (url.searchParams.get("trickle") === "1") trickle(res, name);
          else sendThrottled(res, name, Number(url.searchParams.get("kbps") ?? 100_000));
          return;
        }
        case "ranged-stats":
          res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ ranged: rangedAnswers.get(url.searchParams.get("tag") ?? "") ?? 0 }));
          return;
        case "redirect":
          // Headers are Latin-1: send non-ASCII characters percent-encoded, as a real server would.
          res
            .writeHead(302, {
              location: (url.searchParams.get("to") ?? "/").replace(/[^\x20-\x7e]/g, encodeURIComponent),
            })
            .end();
          return;
        case "chain": {
          const n = Number(parts[1]);
          const next = n <= 1 ? `/media/${parts[2]}` : `/chain/${n - 1}/${parts[2]}`;
          res.writeHead(302, { location: next }).end();
          return;
        }
        case "status":
          res.writeHead(Number(parts[1])).end();
          return;
        case "hang":
          return; // never answer
        case "stall": {
          res.writeHead(200, { "content-length": (await stat(file(parts[1]))).size });
          createReadStream(file(parts[1]), { start: 0, end: 65535 }).on("data", (c) => res.write(c));
          return;
        }
        case "short": {
          const { size } = await stat(file(parts[1]));
          res.writeHead(200, { "content-length": size });
          createReadStream(file(parts[1]), { start: 0, end: Math.floor(size / 2) })
            .on("end", () => res.destroy())
            .pipe(res, { end: false });
          return;
        }
        case "huge":
          res.writeHead(200, { "content-length": 5 * 1024 * 1024 * 1024 });
          res.write(Buffer.alloc(1024));
          return;
        case "endless": {
          // The file (if named), then zeros without end and without Content-Length.
          res.writeHead(200);
          const head = parts[1] === undefined ? Buffer.alloc(0) : await readFile(file(parts[1]));
          res.write(head);
          const chunk = Buffer.alloc(256 * 1024);
          const pump = () => {
            while (!res.destroyed && res.write(chunk)) {
              /* fill the socket */
            }
          };
          res.on("drain", pump);
          pump();
          return;
        }
        default:
          res.writeHead(404).end();
      }
    } catch {
      if (!res.headersSent) res.writeHead(404);
      res.end();
    }
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (pathname) => `http://${host}:${port}${pathname}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
