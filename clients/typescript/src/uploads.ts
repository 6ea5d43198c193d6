import { createP6Client, type P6Client, type P6ClientOptions } from "./client.ts";
import type { components } from "./generated/api.js";
import { type RetryOptions, retryAfterMs } from "./retry.ts";
import { P6ApiError, type Problem } from "./tasks.ts";
import type { TusError, TusPlatform } from "./tus-platform.ts";

export type Upload = components["schemas"]["Upload"];
export type UploadList = components["schemas"]["UploadList"];
export type DirectUpload = components["schemas"]["DirectUpload"];
export type CreateDirectUpload = components["schemas"]["CreateDirectUpload"];

/**
 * What `upload` sends: a Blob or File (a browser's file input, or Node's `fs.openAsBlob(path)`), bytes, or a
 * stream of bytes (a web ReadableStream, or any async iterable of chunks such as a Node Readable — give `size`).
 */
export type UploadSource = Blob | Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export type UploadOptions = {
  /** Upload-Metadata `filename`, kept and served back (default: a File's name). Any UTF-8, no control characters. */
  filename?: string;
  /** More Upload-Metadata pairs. */
  metadata?: Record<string, string>;
  /** The number of bytes: needed for a stream (the service takes Upload-Length up front). */
  size?: number;
  /**
   * Bytes per PATCH (default 50 MiB; a Worker takes at most 100 MB per request). A stream holds one chunk in
   * memory, which a retry re-sends.
   */
  chunkSize?: number;
  /** Called as bytes go out: bytes sent so far and the total. */
  onProgress?: (sent: number, total: number) => void;
  /** Stops the upload (the promise rejects with the signal's reason); the service keeps what it received. */
  signal?: AbortSignal;
  /**
   * Continue the upload at this URL (one `onUploadUrl` reported) from the offset the service has, instead of
   * creating another: after a crash, a restart or an abort. An incomplete upload lives 24 h.
   */
  resume?: string;
  /** The upload's URL, as soon as the service has created it: keep it to `resume` later. */
  onUploadUrl?: (url: string) => void;
  /** Pauses before retrying after a failed request (default 0, 1, 3 and 5 s); each retry asks the offset first. */
  retryDelays?: number[];
};

/** A finished upload: its id (a `source_upload_id`) and its tus URL. */
export type UploadResult = { id: string; url: string };

export const DEFAULT_CHUNK_SIZE = 50 * 1024 * 1024;
const DEFAULT_RETRY_DELAYS = [0, 1000, 3000, 5000];
const UPLOAD_ID = /\/v1\/(?:uploads|direct-uploads)\/([0-9A-HJKMNP-TV-Z]{26})(?:[./]|$)/;

/** The upload id in a tus URL of the service (`/v1/uploads/<id>` or `/v1/direct-uploads/<id>.<secret>/upload`). */
export function uploadIdOf(url: string): string {
  const match = UPLOAD_ID.exec(new URL(url).pathname);
  if (!match) throw new Error(`not an upload URL of the p6 media API: ${url}`);
  return match[1]!;
}

/** tus-js-client's error, as a P6ApiError when the service answered it with a problem (a quota, 413, 409 …). */
function asApiError(error: TusError) {
  const response = error.originalResponse;
  if (!response || response.getStatus() < 400) return error;
  try {
    const problem = JSON.parse(response.getBody()) as Problem;
    if (typeof problem?.code === "string")
      return new P6ApiError(response.getStatus(), problem, { cause: error });
  } catch {}
  return error;
}

/**
 * One resumable upload with tus-js-client to `endpoint` (a creation) or `options.resume` (a continuation).
 * tus-js-client retries a failed request itself (`retryDelays`), but not a 429: like the rest of the client,
 * that waits Retry-After (at most `retry.maxDelayMs`, `retry.maxRetries` times) and goes on from the offset
 * the service has.
 */
async function send(
  platform: TusPlatform,
  source: UploadSource,
  endpoint: string,
  headers: Record<string, string>,
  options: UploadOptions,
  retry: RetryOptions | false = {},
): Promise<UploadResult> {
  const { signal } = options;
  signal?.throwIfAborted();
  const opened = await platform.open(source, options.size);
  const name = options.filename ?? (typeof (source as File).name === "string" ? (source as File).name : "");
  const metadata = { ...options.metadata, ...(name ? { filename: name } : {}) };
  return new Promise<UploadResult>((resolve, reject) => {
    let limited = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const upload = new platform.Upload(opened.file as never, {
      ...platform.defaults?.(),
      endpoint,
      uploadUrl: options.resume ?? null,
      headers,
      metadata,
      uploadSize: opened.size,
      chunkSize: options.chunkSize ?? DEFAULT_CHUNK_SIZE,
      retryDelays: options.retryDelays ?? DEFAULT_RETRY_DELAYS,
      // Resuming is by URL (`resume`), never by a fingerprint kept in localStorage or on disk.
      storeFingerprintForResuming: false,
      // tus-js-client's own rule (retry what is not a 4xx, and 409/423), except a 409 to a creation: a spent
      // direct upload URL, which no retry will mend.
      onShouldRetry: (error) => {
        const status = error.originalResponse?.getStatus() ?? 0;
        if (status === 409 && error.originalRequest?.getMethod() === "POST") return false;
        const retryable = status < 400 || status >= 500 || status === 409 || status === 423;
        const online = (globalThis as { navigator?: { onLine?: boolean } }).navigator?.onLine !== false;
        return retryable && online;
      },
      ...(opened.fileReader ? { fileReader: opened.fileReader } : {}),
      onProgress: options.onProgress ?? null,
      // `retry.maxRetries` counts 429s in a row: each PATCH the service takes starts the count again.
      onChunkComplete: () => {
        limited = 0;
      },
      onUploadUrlAvailable: () => {
        if (upload.url) options.onUploadUrl?.(upload.url);
      },
      onSuccess: () => {
        signal?.removeEventListener("abort", onAbort);
        resolve({ id: uploadIdOf(upload.url!), url: upload.url! });
      },
      onError: (error) => {
        const response = error.originalResponse;
        if (retry !== false && response?.getStatus() === 429 && limited < (retry.maxRetries ?? 3)) {
          const delay =
            retryAfterMs(response.getHeader("Retry-After") ?? null) ??
            (retry.baseDelayMs ?? 500) * 2 ** limited;
          if (delay <= (retry.maxDelayMs ?? 30_000)) {
            limited++;
            timer = setTimeout(() => upload.start(), delay);
            return;
          }
        }
        signal?.removeEventListener("abort", onAbort);
        reject(asApiError(error));
      },
    });
    const onAbort = () => {
      clearTimeout(timer);
      void upload.abort(false);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    upload.start();
  });
}

/** Throws the API's problem as a P6ApiError; otherwise the data. */
function unwrap<T>(result: { data?: T; error?: Problem; response: Response }): T {
  if (result.error !== undefined) throw new P6ApiError(result.response.status, result.error);
  return result.data as T;
}

/**
 * The account's uploads: `upload` (tus, resumable, in chunks, with the key), `createDirect` (a one-time URL
 * for a browser), `get`, `list` (cursor pages, newest first) and `delete`.
 */
export interface Uploads {
  /** Uploads `source` to POST /v1/uploads with the key, resumably; resolves once every byte is stored. */
  upload(source: UploadSource, options?: UploadOptions): Promise<UploadResult>;
  /** POST /v1/uploads/direct: a one-time tus URL for a browser on `cors_origin` (`uploadDirect` there). */
  createDirect(body: CreateDirectUpload): Promise<DirectUpload>;
  get(id: string): Promise<Upload>;
  /** One page, newest first; pass the previous page's `next_cursor` while `has_next`. */
  list(query?: { cursor?: string; limit?: number }): Promise<UploadList>;
  /** Deletes the upload now (its bytes too); a pending direct URL stops working. */
  delete(id: string): Promise<void>;
}

/** `createUploads({ baseUrl, apiKey })`, or with the `client` you already have (its baseUrl and key again). */
export type CreateUploads = (options: P6ClientOptions & { client?: P6Client }) => Uploads;

/**
 * Uploads `source` through a direct upload URL (POST /v1/uploads/direct, made by your server): no key, for a
 * browser on the URL's `cors_origin`. The URL takes one upload; `resume` continues it.
 */
export type UploadDirect = (
  directUrl: string,
  source: UploadSource,
  options?: UploadOptions,
) => Promise<UploadResult>;

/** The upload helpers for one platform's tus-js-client (index.ts: browsers and bundlers; node.ts: Node). */
export function uploadsFor(platform: TusPlatform): {
  createUploads: CreateUploads;
  uploadDirect: UploadDirect;
} {
  function createUploads(options: P6ClientOptions & { client?: P6Client }): Uploads {
    const baseUrl = options.baseUrl.replace(/\/+$/, "");
    const p6 = options.client ?? createP6Client(options);
    return {
      upload: (source: UploadSource, uploadOptions: UploadOptions = {}) =>
        send(
          platform,
          source,
          `${baseUrl}/v1/uploads`,
          { Authorization: `Bearer ${options.apiKey}` },
          uploadOptions,
          options.retry,
        ),
      createDirect: async (body: CreateDirectUpload): Promise<DirectUpload> =>
        unwrap(await p6.POST("/v1/uploads/direct", { body })),
      get: async (id: string): Promise<Upload> =>
        unwrap(await p6.GET("/v1/uploads/{id}", { params: { path: { id } } })),
      list: async (query: { cursor?: string; limit?: number } = {}): Promise<UploadList> =>
        unwrap(await p6.GET("/v1/uploads", { params: { query } })),
      delete: async (id: string): Promise<void> => {
        unwrap(
          await p6.DELETE("/v1/uploads/{id}", {
            params: { path: { id }, header: { "Tus-Resumable": "1.0.0" } },
          }),
        );
      },
    };
  }

  const uploadDirect: UploadDirect = (directUrl, source, options = {}) =>
    send(platform, source, directUrl, {}, options);

  return { createUploads, uploadDirect };
}
