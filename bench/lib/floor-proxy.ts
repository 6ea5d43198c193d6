/**
 * The bench's floor (bench/engine.ts `floor-<op>` lines): the least that any process standing between ffmpeg
 * and the source, and handing the result back, can add. It is a bare pass-through: no address checks, no
 * disk, no probing, no job. Run as its own process (like the engine), it answers
 *
 * - `GET /src/<name>`: `<upstream>/<name>`, passing Range on and streaming the answer through;
 * - `GET /out/<name>`: a file of the replay directory, streamed the way the engine streams a result.
 *
 * argv: the upstream base URL and the replay directory; the bound port goes to the parent over IPC.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pipeline } from "node:stream/promises";

const [upstream = "", replay = ""] = process.argv.slice(2);

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", "http://floor");
  const name = path.basename(url.pathname);
  if (url.pathname.startsWith("/src/")) {
    const range = req.headers.range;
    http
      .get(`${upstream}/${name}`, { headers: range === undefined ? {} : { range } }, (up) => {
        const pass = ["content-length", "content-range", "accept-ranges"] as const;
        const headers = Object.fromEntries(pass.flatMap((h) => (up.headers[h] ? [[h, up.headers[h]]] : [])));
        res.writeHead(up.statusCode ?? 502, headers);
        pipeline(up, res).catch(() => res.destroy());
      })
      .on("error", () => res.destroy());
    return;
  }
  const file = path.join(replay, name);
  try {
    const { size } = await stat(file);
    res.writeHead(200, { "content-length": size });
    await pipeline(createReadStream(file, { highWaterMark: 1024 * 1024 }), res);
  } catch {
    if (!res.headersSent) res.writeHead(404);
    res.end();
  }
});

server.listen(0, "127.0.0.1", () => process.send?.((server.address() as AddressInfo).port));
process.on("disconnect", () => process.exit(0));
