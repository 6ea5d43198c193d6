/**
 * An integration as a new client would write it against types generated from the live document with
 * openapi-typescript's default options: every /v1 operation, called with only the fields the contract
 * requires (a tus upload's headers included), and no casts. test/e2e/generated-client.test.ts generates ./api.d.ts
 * beside a copy of this file, type-checks it (strict), and runs it against the live service: every call here is
 * one the server accepts.
 */
import createClient from "openapi-fetch";
import type { paths } from "./api";

export type Live = {
  baseUrl: string;
  apiKey: string;
  /** The URL of a media file the service can fetch. */
  media: (name: string) => string;
  /** The bytes of a video to upload. */
  video: Uint8Array;
};

/** A fresh Idempotency-Key per call: the same key with another body is refused. */
const key = () => ({ header: { "Idempotency-Key": crypto.randomUUID() } });

/**
 * A binary body as openapi-typescript types it (`format: binary` → string): the bytes as a binary string, one
 * character per byte. openapi-fetch JSON-encodes a body unless given a serializer, so this one sends them back as
 * the bytes they are.
 */
const binary = (bytes: Uint8Array) => ({
  body: Array.from(bytes, (b) => String.fromCharCode(b)).join(""),
  bodySerializer: (body: string) => Uint8Array.from(body, (c) => c.charCodeAt(0)),
});

export async function integration(live: Live) {
  const client = createClient<paths>({
    baseUrl: live.baseUrl,
    headers: { Authorization: `Bearer ${live.apiKey}` },
  });
  const source_url = live.media("av.mp4");
  const photo = live.media("photo.jpg");

  const created = await client.POST("/v1/tasks", { body: { type: "video.probe", source_url } });
  const id = created.data?.id ?? "01JD5Z8X4QK3M7R2T9V6W1Y0AB";
  const page = await client.GET("/v1/tasks", { params: { query: { type: "video.probe", limit: 10 } } });
  const task = await client.GET("/v1/tasks/{id}", {
    params: { path: { id }, header: { Prefer: "wait=30" } },
  });
  const canceled = await client.POST("/v1/tasks/{id}/cancel", { params: { path: { id } } });

  const image = await client.POST("/v1/image/watermark", {
    params: key(),
    body: { source_url: photo, params: { text: "©" } },
  });
  const video = await client.POST("/v1/video/watermark", {
    params: key(),
    body: { source_url, params: { watermark_url: live.media("logo.png") } },
  });
  const cover = await client.POST("/v1/video/extract-cover", { params: key(), body: { source_url } });
  const trim = await client.POST("/v1/video/trim", {
    params: key(),
    body: { source_url, params: { start: 1, duration: 2 } },
  });
  const audio = await client.POST("/v1/audio/trim", {
    params: key(),
    body: { source_url, params: { start: 1, end: 3 } },
  });
  const extracted = await client.POST("/v1/video/extract-audio", { params: key(), body: { source_url } });
  const probe = await client.POST("/v1/video/probe", { params: key(), body: { source_url } });

  // A tus upload (its bytes as application/offset+octet-stream), then used as a source by its id.
  const tus = { "Tus-Resumable": "1.0.0" } as const;
  const length = String(live.video.byteLength);
  const upload = await client.POST("/v1/uploads", {
    params: { header: { ...tus, "Upload-Length": length } },
  });
  const uploadId = upload.response.headers.get("Location")?.split("/").pop() ?? id;
  const patched = await client.PATCH("/v1/uploads/{id}", {
    params: { path: { id: uploadId }, header: { ...tus, "Upload-Offset": "0" } },
    ...binary(live.video),
    headers: { "Content-Type": "application/offset+octet-stream" },
  });
  const uploaded = await client.GET("/v1/uploads/{id}", { params: { path: { id: uploadId } } });
  const uploads = await client.GET("/v1/uploads", { params: { query: { limit: 100 } } });
  const content = await client.GET("/v1/uploads/{id}/content", {
    params: { path: { id: uploadId } },
    parseAs: "arrayBuffer",
  });
  const fromUpload = await client.POST("/v1/video/probe", {
    params: key(),
    body: { source_upload_id: uploadId },
  });

  // A direct upload URL, used as a browser would: no key needed, its secret is in the URL.
  const direct = await client.POST("/v1/uploads/direct", { body: { cors_origin: "https://app.example" } });
  const token = direct.data?.url.split("/").pop() ?? "";
  const hello = new TextEncoder().encode("hello world");
  const started = await client.POST("/v1/direct-uploads/{token}", {
    params: { path: { token }, header: { ...tus, "Upload-Length": String(hello.byteLength) } },
  });
  const sent = await client.PATCH("/v1/direct-uploads/{token}/upload", {
    params: { path: { token }, header: { ...tus, "Upload-Offset": "0" } },
    ...binary(hello),
    headers: { "Content-Type": "application/offset+octet-stream" },
  });
  const removed = await client.DELETE("/v1/uploads/{id}", {
    params: { path: { id: uploadId }, header: tus },
  });

  // Last, as the account's share of the engine is busy while it runs: a pipeline, waited for.
  const pipeline = await client.POST("/v1/tasks", {
    body: {
      type: "pipeline",
      source_url,
      params: {
        steps: [
          { name: "clip", type: "video.trim", params: { start: 1, end: 3 } },
          { name: "marked", type: "video.watermark", use: "clip", params: { text: "©" } },
        ],
      },
    },
  });
  const ran = await client.GET("/v1/tasks/{id}", {
    params: { path: { id: pipeline.data?.id ?? id }, header: { Prefer: "wait=60" } },
  });

  const account = await client.GET("/v1/account");
  const usage = await client.GET("/v1/usage", {
    params: { query: { from: "2026-11-01", to: "2026-11-27" } },
  });

  // What an integration reads from the answers, typed without casts.
  return {
    statuses: {
      created: created.response.status,
      page: page.response.status,
      task: task.response.status,
      canceled: canceled.response.status,
      pipeline: pipeline.response.status,
      image: image.response.status,
      video: video.response.status,
      cover: cover.response.status,
      trim: trim.response.status,
      audio: audio.response.status,
      extracted: extracted.response.status,
      probe: probe.response.status,
      upload: upload.response.status,
      patched: patched.response.status,
      uploaded: uploaded.response.status,
      uploads: uploads.response.status,
      content: content.response.status,
      fromUpload: fromUpload.response.status,
      direct: direct.response.status,
      started: started.response.status,
      sent: sent.response.status,
      ran: ran.response.status,
      removed: removed.response.status,
      account: account.response.status,
      usage: usage.response.status,
    },
    status: task.data?.status,
    canceled: canceled.error?.code ?? canceled.data?.status,
    listed: page.data?.results.map((t) => t.id),
    urls: [
      image.data?.url,
      video.data?.url,
      cover.data?.url,
      trim.data?.url,
      audio.data?.url,
      extracted.data?.url,
    ],
    duration: probe.data?.durationSec,
    uploadState: uploaded.data?.state,
    contentBytes: content.data?.byteLength,
    steps: ran.data?.steps?.map((step) => `${step.name} ${step.status}`),
    uploadDuration: fromUpload.data?.durationSec,
    balance: account.data?.balance,
    scopes: account.data?.key.scopes,
    spent: usage.data?.results.map((row) => `${row.date} ${row.operation} ${row.credits}`),
  };
}
