/**
 * One platform's tus-js-client build (Node's or the browsers') and how an UploadSource becomes what that build
 * reads: tus-node.ts, tus-browser.ts. The types name only what this package uses, so its declarations never
 * import tus-js-client's (which name Node's Buffer, unknown to a browser project's type check).
 */
export type TusPlatform = {
  // `never`: each build takes its own inputs, which `open` produced for it.
  Upload: new (
    file: never,
    options: TusOptions,
  ) => TusUpload;
  /** Options this platform sets on every upload (a fetch HTTP stack where there is no XMLHttpRequest). */
  defaults?: () => { httpStack?: unknown };
  /** The input for `new Upload`, its size when the build cannot tell, and a reader when the build has none. */
  open(
    source: unknown,
    size: number | undefined,
  ): Promise<{ file: unknown; size: number | null; fileReader?: TusFileReader }>;
};

export type TusUpload = {
  url: string | null;
  start(): void;
  abort(shouldTerminate?: boolean): Promise<void>;
};

export type TusResponse = {
  getStatus(): number;
  getBody(): string;
  getHeader(name: string): string | undefined;
};

export type TusOptions = {
  endpoint: string;
  uploadUrl: string | null;
  headers: Record<string, string>;
  metadata: Record<string, string>;
  uploadSize: number | null;
  chunkSize: number;
  retryDelays: number[];
  storeFingerprintForResuming: boolean;
  fileReader?: TusFileReader;
  onShouldRetry: (error: TusError) => boolean;
  onProgress: ((sent: number, total: number) => void) | null;
  onChunkComplete: () => void;
  onUploadUrlAvailable: () => void;
  onSuccess: () => void;
  onError: (error: TusError) => void;
};

export type TusError = Error & {
  originalRequest?: { getMethod(): string } | null;
  originalResponse?: TusResponse | null;
};

export type TusFileReader = {
  openFile(
    input: unknown,
    chunkSize: number,
  ): Promise<{
    size: number;
    slice(start: number, end: number): Promise<{ value: unknown; done: boolean }>;
    close(): void;
  }>;
};

/** A stream's size must be given: the service takes Upload-Length at creation (no deferred length). */
export function requireSize(size: number | undefined): number {
  if (size === undefined || !Number.isSafeInteger(size) || size < 0)
    throw new TypeError("uploading a stream needs options.size, its length in bytes");
  return size;
}

export const isAsyncIterable = (value: unknown): value is AsyncIterable<Uint8Array> =>
  typeof value === "object" && value !== null && Symbol.asyncIterator in value;

export const isReadableStream = (value: unknown): value is ReadableStream<Uint8Array> =>
  typeof ReadableStream !== "undefined" && value instanceof ReadableStream;
