/**
 * POST /v1/fetch (protocol v1, README.md): a source fetched by the guarded fetcher, sniffed, and streamed
 * back with what it is (the Worker's image sources and logos come this way). POST /v1/resolve: the same
 * address policy for a URL the engine does not fetch (webhooks, task sources at creation).
 */

import { mkdtemp, rm } from "node:fs/promises";
import type http from "node:http";
import path from "node:path";
import { checkUrl } from "@p6/contract/address-policy";
import { imageSize, notAnImage } from "@p6/contract/sniff";
import { abortOnDisconnect, sendError, sourceFields, streamFile } from "./http-io.ts";
import { openInput } from "./pipeline/job.ts";
import { EngineError, type FetchedMedia, invalid, type MediaKind, unsupported } from "./protocol.ts";
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
  body: Record<string, unknown>,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const { policy, tmpDir, log } = engine;
  // The client's field the URL came from (a logo is params.watermark_url), named in every refusal.
  const field = body.field === "params.watermark_url" ? body.field : "source_url";
  if (typeof body.source_url === "string") {
    const check = checkUrl(body.source_url, policy);
    if (!check.ok) throw invalid(field, `${field} ${check.reason}`);
  }
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

/** Fields a client may name in POST /v1/resolve: what the Worker checks. */
const RESOLVE_FIELDS = new Set(["source_url", "params.watermark_url", "webhook"]);

/**
 * POST /v1/resolve `{url, field}` → 200 `{addresses}` when a fetch could go there; 400 naming `field` when the
 * URL or any address its name resolves to is refused; 502 when the name does not resolve.
 */
export async function resolveTarget(
  engine: Pick<FetchRouteContext, "policy">,
  body: Record<string, unknown>,
): Promise<{ addresses: string[] }> {
  const field = typeof body.field === "string" && RESOLVE_FIELDS.has(body.field) ? body.field : null;
  if (field === null) throw invalid("field", `field must be one of ${[...RESOLVE_FIELDS].join(", ")}`);
  if (typeof body.url !== "string") throw invalid(field, `${field} must be a string`);
  return { addresses: await resolveUrl(body.url, field, engine.policy) };
}
