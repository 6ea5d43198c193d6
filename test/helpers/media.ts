import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { expect, inject } from "vitest";
import { createApp } from "../../src/app";
import { record } from "./answers";
import { BASE, call } from "./api";

export const media = (name: string) => `${inject("mediaBase")}/media/${name}`;
export const fixture = (path: string) => `${inject("mediaBase")}${path}`;

/** A fresh Idempotency-Key: unique whatever the clock does (workerd's stands still between I/O). */
export const idemKey = () => `test-${crypto.randomUUID()}`;

/** POST a synchronous operation. */
export function operate(
  path: string,
  key: string,
  body: unknown,
  options: { idempotencyKey?: string | null; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.idempotencyKey !== null) headers["Idempotency-Key"] = options.idempotencyKey ?? idemKey();
  return call(path, { method: "POST", key, json: body, headers });
}

/** The same, through an app with overridden bindings (timeouts, a missing engine, a missing secret). */
export async function operateWith(overrides: Partial<Env>, path: string, key: string, body: unknown) {
  const ctx = createExecutionContext();
  const request = new Request(`${BASE}${path}`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${key}`,
      "Content-Type": "application/json",
      "Idempotency-Key": idemKey(),
    },
    body: JSON.stringify(body),
  });
  const response = await createApp().fetch(request, { ...env, ...overrides }, ctx);
  await waitOnExecutionContext(ctx);
  return record(request, response);
}

/** Downloads a produced file through its signed URL (served by the Worker). */
export async function download(url: string) {
  expect(url.startsWith(`${BASE}/files/`)).toBe(true);
  const response = await call(url.slice(BASE.length));
  expect(response.status).toBe(200);
  return { bytes: new Uint8Array(await response.arrayBuffer()), type: response.headers.get("content-type") };
}

export type Probed = {
  streams: {
    codec_type: string;
    codec_name: string;
    width?: number;
    height?: number;
    bit_rate?: string;
    sample_rate?: string;
    channels?: number;
  }[];
  format: { duration: string; format_name: string };
};

/** ffprobe of bytes, through the loopback inspector (real ffprobe). */
export async function probe(bytes: Uint8Array): Promise<Probed> {
  const response = await fetch(inject("inspectorUrl"), { method: "POST", body: bytes });
  expect(response.status).toBe(200);
  return (await response.json()) as Probed;
}

export const stream = (p: Probed, type: "video" | "audio") => p.streams.find((s) => s.codec_type === type);
