import http from "node:http";
import type { AddressInfo } from "node:net";

/** One request the receiver got, as it arrived: the raw body is kept byte for byte (as UTF-8 text). */
export type ReceivedRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Unix milliseconds at arrival. */
  time: number;
};

/**
 * How the receiver answers requests to one path. The n-th request gets statuses[n] (the last entry once
 * the list is used up; 200 without a script) after delaysMs[n] (same rule; 0 by default). A 3xx answer
 * carries `Location: location`.
 */
export type ReceiverScript = { statuses?: number[]; delaysMs?: number[]; location?: string };

const pick = (list: number[] | undefined, n: number, fallback: number) =>
  list && list.length > 0 ? (list[Math.min(n, list.length - 1)] ?? fallback) : fallback;

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A loopback stand-in for a customer's webhook endpoint, for the workerd tests (which cannot listen):
 * - POST /_script/<path> with a ReceiverScript as JSON: how <path> answers from now on (clears what it got);
 * - GET /_received/<path>: the requests <path> got, in order, as JSON ReceivedRequest[];
 * - any other request to <path> is recorded and answered per its script.
 */
export async function startWebhookReceiver() {
  const scripts = new Map<string, ReceiverScript>();
  const received = new Map<string, ReceivedRequest[]>();

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://receiver");
    const body = await readBody(req);
    const json = (status: number, value: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));

    if (url.pathname.startsWith("/_script/") && req.method === "POST") {
      const path = url.pathname.slice("/_script".length);
      scripts.set(path, JSON.parse(body.toString("utf8") || "{}") as ReceiverScript);
      received.set(path, []);
      return json(200, { ok: true });
    }
    if (url.pathname.startsWith("/_received/") && req.method === "GET") {
      return json(200, received.get(url.pathname.slice("/_received".length)) ?? []);
    }

    const path = url.pathname;
    const list = received.get(path) ?? [];
    received.set(path, list);
    const n = list.length;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      headers[name] = Array.isArray(value) ? value.join(", ") : (value ?? "");
    }
    list.push({ method: req.method ?? "", path, headers, body: body.toString("utf8"), time: Date.now() });

    const script = scripts.get(path) ?? {};
    const status = pick(script.statuses, n, 200);
    const delay = pick(script.delaysMs, n, 0);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    if (res.destroyed) return;
    const extra: Record<string, string> =
      status >= 300 && status < 400 ? { location: script.location ?? "http://example.com/moved" } : {};
    res.writeHead(status, { "content-type": "text/plain", ...extra }).end(`status ${status}`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
