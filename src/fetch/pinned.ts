import { connect as socketConnect } from "cloudflare:sockets";

/**
 * One HTTP/1.1 POST to a URL, over a TCP connection to an address given here instead of one its name resolves
 * to: how a webhook reaches exactly the address its check resolved (docs/decisions.md "Webhooks"). `fetch`
 * cannot do this (it resolves the name itself, and refuses IP addresses on Cloudflare), and no library speaks
 * HTTP over workerd's `connect()`: the request is written here, and only the answer's status line and headers
 * are read (a webhook's answer body is never used). HTTPS upgrades the connection with `startTls`, naming the
 * URL's host, so the certificate is checked for that name and SNI carries it (workerd honours the name; on
 * Cloudflare's network it does not, which is why production delivers with `fetch`, WEBHOOK_EGRESS=platform).
 */

export type Connect = typeof socketConnect;

/** The answer's head: status and Location (a redirect is reported, never followed). */
export type PinnedAnswer = { status: number; location: string | null };

/** Bytes of the answer's head read at most: a head longer than this is not a valid webhook answer. */
const MAX_HEAD_BYTES = 16 * 1024;

const encoder = new TextEncoder();

/**
 * The connection to the address could not be made (refused, unreachable, TLS refused): nothing was sent, so
 * another address may be tried.
 */
export class ConnectionError extends Error {
  override readonly name = "ConnectionError";
}

/** The host as the `Host` header and TLS need it: an IPv6 literal keeps its brackets in Host only. */
function hostnameOf(url: URL) {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/** Reads the answer's status line and headers, skipping interim 1xx answers. */
async function readHead(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<PinnedAnswer> {
  const decoder = new TextDecoder("latin1");
  let text = "";
  for (;;) {
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) {
      const [statusLine = "", ...lines] = text.slice(0, end).split("\r\n");
      const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine)?.[1];
      if (status === undefined) throw new Error("the receiver did not answer in HTTP/1.1");
      if (status.startsWith("1")) {
        text = text.slice(end + 4);
        continue;
      }
      const location = lines.find((line) => /^location:/i.test(line));
      return { status: Number(status), location: location?.slice(location.indexOf(":") + 1).trim() ?? null };
    }
    if (text.length > MAX_HEAD_BYTES) throw new Error("the receiver's answer has an oversized head");
    const { done, value } = await reader.read();
    if (done) throw new Error("connection closed before an answer");
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * POSTs `body` to `url` through `address` (an IP address the caller checked), with `headers` and the URL's
 * own `Host`. Resolves to the answer's head; rejects with a ConnectionError (no connection: nothing sent), a
 * TimeoutError (`signal`), or another error (the request may have arrived).
 */
export async function postPinned(
  url: URL,
  address: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  connect: Connect = socketConnect,
): Promise<PinnedAnswer> {
  const https = url.protocol === "https:";
  const port = Number(url.port || (https ? 443 : 80));
  const plain = connect(
    { hostname: address.includes(":") ? `[${address}]` : address, port },
    { secureTransport: https ? "starttls" : "off", allowHalfOpen: false },
  );
  const socket = https ? plain.startTls({ expectedServerHostname: hostnameOf(url) }) : plain;
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => reject(signal.reason);
    if (signal.aborted) fail();
    signal.addEventListener("abort", fail, { once: true });
  });
  aborted.catch(() => {});
  try {
    const payload = encoder.encode(body);
    const head = [
      `POST ${url.pathname}${url.search} HTTP/1.1`,
      `Host: ${url.host}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      `Content-Length: ${payload.byteLength}`,
      "Connection: close",
      "",
      "",
    ].join("\r\n");
    const exchange = (async () => {
      await socket.opened.catch((error: unknown) => {
        throw new ConnectionError(String((error as Error)?.message ?? error));
      });
      const writer = socket.writable.getWriter();
      await writer.write(encoder.encode(head));
      await writer.write(payload);
      writer.releaseLock();
      const reader = socket.readable.getReader();
      try {
        return await readHead(reader);
      } finally {
        reader.releaseLock();
      }
    })();
    exchange.catch(() => {});
    return await Promise.race([exchange, aborted]);
  } finally {
    // Not awaited: closing waits for the connection to settle, which a dead address may take long to do.
    socket.close().catch(() => {});
  }
}
