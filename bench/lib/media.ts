import { execFileSync } from "node:child_process";
import { createReadStream, existsSync, mkdirSync, statSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { publishSync } from "../../containers/ffmpeg/test/support/fixture-files.ts";

export const MEDIA_DIR = path.resolve(import.meta.dirname, "../.media");

/** Runs ffmpeg; its output, the last argument, appears whole or not at all (two benches may make it at once). */
function ffmpeg(args: string[]) {
  publishSync(args.at(-1)!, (partial) =>
    execFileSync(process.env.FFMPEG_PATH ?? "ffmpeg", [
      ...["-hide_banner", "-loglevel", "error", "-y", ...args.slice(0, -1), partial],
    ]),
  );
}

/** Bench inputs, generated once with ffmpeg and cached in bench/.media (git-ignored). */
export function benchMedia() {
  mkdirSync(MEDIA_DIR, { recursive: true });
  const file = (name: string) => path.join(MEDIA_DIR, name);
  if (!existsSync(file("photo-1080.jpg"))) {
    ffmpeg([
      "-f",
      "lavfi",
      "-i",
      "testsrc2=size=1920x1080",
      "-frames:v",
      "1",
      "-q:v",
      "3",
      file("photo-1080.jpg"),
    ]);
  }
  if (!existsSync(file("photo-720.jpg"))) {
    ffmpeg([
      "-f",
      "lavfi",
      "-i",
      "testsrc2=size=1280x720",
      "-frames:v",
      "1",
      "-q:v",
      "3",
      file("photo-720.jpg"),
    ]);
  }
  if (!existsSync(file("logo.png"))) {
    ffmpeg([
      "-f",
      "lavfi",
      "-i",
      "color=c=red@1.0:size=400x200,format=rgba,geq=r='255':g='0':b='0':a='if(lt(X,200),255,0)'",
      "-frames:v",
      "1",
      file("logo.png"),
    ]);
  }
  if (!existsSync(file("clip.mp4"))) {
    ffmpeg([
      "-f",
      "lavfi",
      "-i",
      "testsrc2=size=1280x720:rate=30:duration=10",
      "-f",
      "lavfi",
      "-i",
      "sine=duration=10",
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-pix_fmt",
      "yuv420p",
      "-c:a",
      "aac",
      "-shortest",
      "-movflags",
      "+faststart",
      file("clip.mp4"),
    ]);
  }
  return file;
}

/** Serves bench/.media on loopback (the "public internet" of the benchmarks). */
export async function serveMedia() {
  const server = http.createServer((req, res) => {
    const name = path.basename(new URL(req.url ?? "/", "http://x").pathname);
    const file = path.join(MEDIA_DIR, name);
    if (!existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { "content-length": statSync(file).size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { url: (name: string) => `http://127.0.0.1:${port}/${name}`, close: () => server.close() };
}

/** The engine's slow-source floor (containers/ffmpeg/src/config.ts, ENGINE_MIN_SOURCE_BYTES_PER_SECOND). */
const ENGINE_MIN_SOURCE_BYTES_PER_SECOND = 64 * 1024;

/**
 * A source that keeps a probe task `processing` for as long as a bench runs, without breaking the engine's
 * slow-source rule (a source must deliver ≥ 64 KiB/s once it answered, else the job fails SOURCE_UNREACHABLE):
 * it streams 4× that rate. It is an MP4 whose 400 MB mdat comes before its moov and which does not serve byte
 * ranges, so ffprobe, having read the head, asks for the bytes after the mdat and the engine must download up to
 * them: at 256 KiB/s that is 26 minutes, longer than any bench (the task's processing budget, 15 min, ends it
 * first if nothing else does). Cancel the task when done with it: it holds an engine slot.
 */
export async function runningSource() {
  const mdat = 400 * 1024 * 1024;
  const ftyp = Buffer.alloc(24);
  ftyp.writeUInt32BE(24, 0);
  ftyp.write("ftypisom", 4, "latin1");
  ftyp.writeUInt32BE(0x200, 12);
  ftyp.write("isommp41", 16, "latin1");
  const mdatHead = Buffer.alloc(8);
  mdatHead.writeUInt32BE(mdat + 8, 0);
  mdatHead.write("mdat", 4, "latin1");
  // The moov that ffprobe would look for after the mdat: the declared length covers it, the bench never sends it.
  const length = ftyp.length + mdatHead.length + mdat + 1024;
  const tickMs = 250;
  const chunk = Buffer.alloc(((4 * ENGINE_MIN_SOURCE_BYTES_PER_SECOND) / 1000) * tickMs);
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-length": length, "content-type": "video/mp4" });
    res.write(Buffer.concat([ftyp, mdatHead, chunk]));
    const timer = setInterval(() => res.write(chunk), tickMs);
    timers.add(timer);
    res.on("close", () => {
      clearInterval(timer);
      timers.delete(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/never-ending.mp4`,
    close: () => {
      for (const timer of timers) clearInterval(timer);
      server.closeAllConnections();
      server.close();
    },
  };
}

export function p50(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
