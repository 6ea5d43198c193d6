/**
 * POST /v1/fetch (protocol v1, README.md): a source fetched by the guarded fetcher, sniffed, and streamed
 * back with what it is (the Worker's image sources and logos come this way). POST /v1/resolve: the same
 * address policy for a source before the engine fetches it (a task's sources and logo, at its creation).
 */

import { mkdtemp, rm } from "node:fs/promises";
import type http from "node:http";
import path from "node:path";
import { imageSize, notAnImage } from "@p6/contract/sniff";
import { abortOnDisconnect, checkSourceUrl, sendError, streamFile } from "./http-io.ts";
import { openInput } from "./pipeline/job.ts";
import {
  EngineError,
  type FetchedMedia,
  type FetchRequest,
  type ResolveRequest,
  unsupported,
} from "./protocol.ts";
import { type FetchPolicy, resolveUrl } from "./security/fetcher.ts";
import { LIMITS } from "./security/limits.ts";

const IMAGE_TYPES: Record<string, string> = { png: "image/png", jpeg: "image/jpeg", webp: "image/webp" };

export interface FetchRouteContext {
  policy: FetchPolicy;
  /** The engine process's temp directory. */
  tmpDir: string;
  log: (line: string) => void;
}

/** Answers on the Node response (`res`): the file is streamed disk → socket, errors after the fetch started too. */
export async function fetchMedia(
  engine: FetchRouteContext,
  body: FetchRequest,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const { policy, tmpDir, log } = engine;
  // The client's field the URL came from (a logo is params.watermark_url), named in every refusal.
  const field = body.field ?? "source_url";
  const url = checkSourceUrl(body.source_url, policy, field);
  const maxBytes = body.max_source_bytes ?? LIMITS.defaultMaxFetchBytes;
  const timeoutMs = body.timeout_ms ?? LIMITS.defaultFetchTimeoutMs;
  const kinds = body.accept ?? ["image"];
  const controller = new AbortController();
  abortOnDisconnect(req, res, controller);
  const timer = setTimeout(
    () => controller.abort(new EngineError("PROCESSING_TIMEOUT", "fetching the source took too long")),
    timeoutMs,
  );
  const dir = await mkdtemp(path.join(tmpDir, "fetch-"));
  const deferred: (() => void)[] = [];
  const ctx = { signal: controller.signal, dir, policy, defer: (fn: () => void) => deferred.push(fn) };
  try {
    const { source, sniffed } = await openInput(ctx, url, field, maxBytes, "source");
    const kind =
      sniffed === null
        ? null
        : sniffed.kind === "av"
          ? kinds.includes("video")
            ? "video"
            : "audio"
          : sniffed.kind;
    const head = await source.read(0, LIMITS.sniffBytes);
    if (sniffed === null || kind === null || !kinds.includes(kind)) {
      throw unsupported(
        kinds.length === 1 && kinds[0] === "image"
          ? notAnImage(head, field === "source_url" ? "the source" : "the watermark")
          : "the source media type is not supported",
      );
    }
    const size = await source.complete();
    const media: FetchedMedia = {
      kind,
      format: sniffed.format,
      ...(kind === "image" ? (imageSize(head) ?? {}) : {}),
    };
    await streamFile(res, source.path, size, {
      "content-type": IMAGE_TYPES[sniffed.format] ?? "application/octet-stream",
      "x-engine-media": JSON.stringify(media),
    });
  } catch (err) {
    const reason = controller.signal.aborted ? controller.signal.reason : err;
    const failure =
      reason instanceof EngineError
        ? reason
        : new EngineError("INTERNAL", "internal engine error", { internal: String(err) });
    if (failure.code === "INTERNAL") log(`fetch failed: ${failure.internal ?? failure.message}`);
    sendError(res, failure);
  } finally {
    clearTimeout(timer);
    for (const fn of deferred) fn();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * POST /v1/resolve `{url, field}` → 200 `{addresses}` when a fetch could go there; 400 naming `field` when the
 * URL or any address its name resolves to is refused; 502 when the name does not resolve.
 */
export async function resolveTarget(
  engine: Pick<FetchRouteContext, "policy">,
  body: ResolveRequest,
): Promise<{ addresses: string[] }> {
  return { addresses: await resolveUrl(body.url, body.field, engine.policy) };
}
