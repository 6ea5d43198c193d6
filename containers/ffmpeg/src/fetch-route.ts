/**
 * POST /v1/fetch (protocol v1, README.md): a source fetched by the guarded fetcher, sniffed, and streamed
 * back with what it is (the Worker's image sources and logos come this way).
 */

import { mkdtemp, rm } from "node:fs/promises";
import type http from "node:http";
import path from "node:path";
import { abortOnDisconnect, readJson, sendError, sourceFields, streamFile } from "./http-io.ts";
import { openInput } from "./pipeline/job.ts";
import { EngineError, type FetchedMedia, invalid, type MediaKind, unsupported } from "./protocol.ts";
import type { FetchPolicy } from "./security/fetcher.ts";
import { LIMITS } from "./security/limits.ts";
import { imageSize } from "./sniff.ts";

const IMAGE_TYPES: Record<string, string> = { png: "image/png", jpeg: "image/jpeg", webp: "image/webp" };

export interface FetchRouteContext {
  policy: FetchPolicy;
  /** The engine process's temp directory. */
  tmpDir: string;
  log: (line: string) => void;
}

export async function fetchMedia(
  engine: FetchRouteContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const { policy, tmpDir, log } = engine;
  const body = await readJson(req);
  const { url, maxBytes, timeoutMs } = sourceFields(body, policy, {
    maxBytes: LIMITS.defaultMaxFetchBytes,
    timeoutMs: LIMITS.defaultFetchTimeoutMs,
  });
  const accept = body.accept ?? ["image"];
  if (
    !Array.isArray(accept) ||
    accept.length === 0 ||
    !accept.every((k) => k === "image" || k === "video" || k === "audio")
  ) {
    throw invalid("accept", 'accept must list "image", "video" and/or "audio"');
  }
  const kinds = accept as MediaKind[];
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
    const { source, sniffed } = await openInput(ctx, url, "source_url", maxBytes, "source");
    const kind =
      sniffed === null
        ? null
        : sniffed.kind === "av"
          ? kinds.includes("video")
            ? "video"
            : "audio"
          : sniffed.kind;
    if (sniffed === null || kind === null || !kinds.includes(kind)) {
      throw unsupported(
        kinds.length === 1 && kinds[0] === "image"
          ? "the source is not a PNG, JPEG or WebP image"
          : "the source media type is not supported",
      );
    }
    const head = await source.read(0, LIMITS.sniffBytes);
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
