/**
 * The engine's HTTP plumbing that its routes answering on the Node response share: JSON out, the source URL's
 * policy check, aborting work when the client goes away, and streaming a produced file back.
 */
import { createReadStream } from "node:fs";
import type http from "node:http";
import { pipeline } from "node:stream/promises";
import { checkUrl } from "@p6/contract/address-policy";
import { EngineError, invalid } from "./protocol.ts";
import type { FetchPolicy } from "./security/fetcher.ts";

export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
) {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/**
 * An error answered before the request's body was read to its end (a body over the limit) closes the
 * connection after the answer: the unread rest must not be parsed as a next request, nor the socket reused.
 */
export function sendError(res: http.ServerResponse, err: EngineError): void {
  const unread = res.req?.complete === false;
  sendJson(res, err.status, err.toBody(), unread ? { connection: "close" } : {});
  // Discarded while the answer goes out, so the close is an orderly one rather than a reset (mostly: a
  // client still sending when the socket closes may see one).
  if (unread) res.req.resume();
}

/** A source URL by the address policy's rules for its form (its addresses are checked when it is fetched). */
export function checkSourceUrl(url: string, policy: FetchPolicy, field = "source_url"): string {
  const check = checkUrl(url, policy);
  if (!check.ok) throw invalid(field, `${field} ${check.reason}`);
  return url;
}

/**
 * Responses whose last byte has been handed to the socket. A client may close as soon as it has
 * Content-Length bytes, before the file stream has even seen its end: that is a delivery, not an abort.
 */
const delivered = new WeakSet<http.ServerResponse>();

/**
 * Aborts the job when the client goes away before the response is complete, i.e. when the connection
 * (the request's socket) closes first. Two things look like a disconnect and are not: the request
 * stream's own 'close' (it closes as soon as its body has been read), and `res.socket === null`. On a
 * keep-alive connection the client may send its next request as soon as it has the previous answer's
 * Content-Length bytes, while our end of that answer is still finishing (the file stream has not seen
 * its end yet); Node then parses the new request and queues its response without a socket until the
 * previous one is done. Such a queued response gets no 'close' if the connection drops, so the socket's
 * 'close' is watched as well.
 */
export function abortOnDisconnect(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  controller: AbortController,
): void {
  const gone = () => {
    if (!res.writableEnded && !delivered.has(res)) {
      controller.abort(new EngineError("INTERNAL", "the client went away"));
    }
  };
  const connection = req.socket;
  if (connection.destroyed) {
    gone();
    return;
  }
  connection.once("close", gone);
  res.once("close", () => {
    connection.off("close", gone);
    gone();
  });
}

export async function streamFile(
  res: http.ServerResponse,
  file: string,
  size: number,
  headers: http.OutgoingHttpHeaders,
): Promise<void> {
  res.writeHead(200, { "content-length": size, ...headers });
  // Bounded by the known size: the response ends with its last byte, not one empty read later.
  const file$ = createReadStream(file, {
    highWaterMark: 1024 * 1024,
    ...(size > 0 ? { start: 0, end: size - 1 } : {}),
  });
  let sent = 0;
  file$.on("data", (chunk) => {
    sent += chunk.length;
    if (sent >= size) delivered.add(res);
  });
  try {
    await pipeline(file$, res);
  } catch (err) {
    if (!delivered.has(res)) throw err;
  }
}
