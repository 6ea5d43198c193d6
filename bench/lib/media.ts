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

/**
 * A source that never finishes: it declares 10 MB and sends one zero byte a second, so a task reading it stays
 * `processing` (the engine's read timeout never fires) for as long as the bench runs.
 */
export async function trickleServer() {
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-length": 10_000_000, "content-type": "video/mp4" });
    const timer = setInterval(() => res.write(Buffer.alloc(1)), 1000);
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
