import { call } from "../helpers/api";

export const TUS = { "Tus-Resumable": "1.0.0" };
export const OCTETS = "application/offset+octet-stream";

/** Deterministic, incompressible-looking bytes (an xorshift stream), with an optional head (magic bytes). */
export function bytes(length: number, seed = 1, head: Uint8Array = new Uint8Array()) {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
    out[i + 1] = (x >>> 8) & 0xff;
    out[i + 2] = (x >>> 16) & 0xff;
    out[i + 3] = (x >>> 24) & 0xff;
  }
  out.set(head.subarray(0, length));
  return out;
}

export async function sha256Hex(data: Uint8Array | ArrayBuffer) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function sha256Base64(data: Uint8Array) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return btoa(String.fromCharCode(...digest));
}

export async function sha1Base64(data: Uint8Array) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", data));
  return btoa(String.fromCharCode(...digest));
}

export async function createUpload(key: string, length: number, headers: Record<string, string> = {}) {
  const response = await call("/v1/uploads", {
    method: "POST",
    key,
    headers: { ...TUS, "Upload-Length": String(length), ...headers },
  });
  if (response.status !== 201)
    throw new Error(`create answered ${response.status}: ${await response.text()}`);
  const location = response.headers.get("location")!;
  return { id: location.split("/").pop()!, path: new URL(location).pathname, response };
}

export function patch(
  key: string,
  path: string,
  offset: number,
  body: BodyInit,
  headers: Record<string, string> = {},
) {
  return call(path, {
    method: "PATCH",
    key,
    headers: { ...TUS, "Content-Type": OCTETS, "Upload-Offset": String(offset), ...headers },
    body,
  });
}

export function head(key: string, path: string, headers: Record<string, string> = TUS) {
  return call(path, { method: "HEAD", key, headers });
}

/** A request body that sends `data` and then fails, as a client that drops its connection midway. */
export function cutOff(data: Uint8Array) {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(data);
    },
    pull(controller) {
      controller.error(new Error("connection reset"));
    },
  });
}
