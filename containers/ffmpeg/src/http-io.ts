/**
 * The engine's HTTP plumbing shared by its routes: JSON in and out, the common body fields, aborting work
 * when the client goes away, and streaming a produced file back.
 */
import { createReadStream } from "node:fs";
import type http from "node:http";
import { pipeline } from "node:stream/promises";
import { checkUrl } from "@p6/contract/address-policy";
import { EngineError, invalid } from "./protocol.ts";
import type { FetchPolicy } from "./security/fetcher.ts";
import { describeBytes, LIMITS } from "./security/limits.ts";

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

export async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Not destroyed on a throw (the iterator's default): the 413 is to reach the client before the connection
  // closes (sendError), rather than a reset.
  for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > LIMITS.maxRequestBodyBytes) {
      throw new EngineError(
        "REQUEST_BODY_TOO_LARGE",
        `the request body exceeds ${describeBytes(LIMITS.maxRequestBodyBytes)}`,
      );
    }
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw invalid("body", "the request body must be JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalid("body", "the request body must be an object");
  }
  return body as Record<string, unknown>;
}

function positiveInt(body: Record<string, unknown>, key: string, fallback: number, max: number): number {
  const value = body[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > max) {
    throw invalid(key, `${key} must be an integer between 1 and ${max}`);
  }
  return value;
}

function sourceUrl(body: Record<string, unknown>, policy: FetchPolicy): string {
  const url = body.source_url;
  if (typeof url !== "string" || url === "") throw invalid("source_url", "source_url is required");
  const check = checkUrl(url, policy);
  if (!check.ok) throw invalid("source_url", `source_url ${check.reason}`);
  return url;
}

/**
 * The fields every route that fetches a source reads: `source_url` (checked against the address policy),
 * `max_source_bytes` and `timeout_ms`, each with the route's default and at most the engine's ceiling.
 */
export function sourceFields(
  body: Record<string, unknown>,
  policy: FetchPolicy,
  defaults: { maxBytes: number; timeoutMs: number },
): { url: string; maxBytes: number; timeoutMs: number } {
  return {
    url: sourceUrl(body, policy),
    maxBytes: positiveInt(body, "max_source_bytes", defaults.maxBytes, LIMITS.maxSourceBytesCeiling),
    timeoutMs: positiveInt(body, "timeout_ms", defaults.timeoutMs, LIMITS.maxTimeoutMs),
  };
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
