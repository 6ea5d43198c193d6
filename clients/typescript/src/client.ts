import createClient, { type Client, type Middleware } from "openapi-fetch";
import type { paths } from "./generated/api.js";
import { IDEMPOTENCY_KEY_PATHS } from "./generated/operations.ts";
import { type RetryOptions, retryingFetch } from "./retry.ts";

type IdempotencyKeyName<H> = {
  [K in keyof H]: K extends string ? (Lowercase<K> extends "idempotency-key" ? K : never) : never;
}[keyof H];

/** An operation whose Idempotency-Key header becomes optional: the client supplies one when it is absent. */
type WithOptionalKey<Op> = Op extends { parameters: { header: infer H } }
  ? Omit<Op, "parameters"> & {
      parameters: Omit<Op["parameters"], "header"> & {
        header?: Omit<H, IdempotencyKeyName<H>> & Partial<Pick<H, IdempotencyKeyName<H>>>;
      };
    }
  : Op;

/** The document's paths as the client accepts them. */
export type ClientPaths = {
  [P in keyof paths]: { [M in keyof paths[P]]: WithOptionalKey<paths[P][M]> };
};

export type P6Client = Client<ClientPaths>;

export type P6ClientOptions = {
  /** e.g. https://api.example.com (no trailing /v1). */
  baseUrl: string;
  /** p6_<key_id>:<secret>. */
  apiKey: string;
  /** Retries on 429 and 503 (Retry-After honoured), or false for none. */
  retry?: RetryOptions | false;
  fetch?: (request: Request) => Promise<Response>;
};

/** Sends a fresh Idempotency-Key (a UUID) on the operations that need one, unless the caller set it. */
const idempotencyKeys: Middleware = {
  onRequest({ request, schemaPath }) {
    if (IDEMPOTENCY_KEY_PATHS.includes(schemaPath) && !request.headers.has("Idempotency-Key")) {
      request.headers.set("Idempotency-Key", crypto.randomUUID());
    }
    return request;
  },
};

/** A typed client of the API (openapi-fetch over the generated paths). */
export function createP6Client(options: P6ClientOptions): P6Client {
  const base = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const client = createClient<ClientPaths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: { Authorization: `Bearer ${options.apiKey}` },
    fetch: options.retry === false ? base : retryingFetch(base, options.retry),
  });
  client.use(idempotencyKeys);
  return client;
}
