import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import sharp from "sharp";

/** Debian's Chromium, headless, with the flags this closed network needs (no background connections). */
export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
/** Where the browser tests write their screenshots. */
export const SCREENSHOTS = path.resolve(import.meta.dirname, "../../test-artifacts/screenshots");

export type Delivery = { headers: Record<string, string>; body: string; path: string };

/** Serves a source image at /photo.png and records every other request (webhook deliveries), on loopback. */
export async function startHelperServer(size = { width: 640, height: 400 }) {
  const png = await sharp({ create: { ...size, channels: 3, background: "#3a7bd5" } })
    .png()
    .toBuffer();
  const deliveries: Delivery[] = [];
  const server = createServer((request, response) => {
    if (request.method === "GET" && request.url === "/photo.png") {
      response.writeHead(200, { "Content-Type": "image/png", "Content-Length": png.length });
      return response.end(png);
    }
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      deliveries.push({
        headers: request.headers as Record<string, string>,
        body: Buffer.concat(chunks).toString("utf8"),
        path: request.url ?? "",
      });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, deliveries };
}

/** Polls `probe` until it returns a value (not a timed assertion: the limit only ends a hung run). */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 90_000,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
