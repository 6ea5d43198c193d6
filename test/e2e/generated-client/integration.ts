/**
 * An integration as a new client would write it against types generated from the live document with
 * openapi-typescript's default options: every /v1 operation, called with only the fields the contract
 * requires (a tus upload's headers included), and no casts. test/e2e/generated-client.test.ts generates ./api.d.ts beside a copy of this file
 * and type-checks it.
 */
import createClient from "openapi-fetch";
import type { paths } from "./api";

const client = createClient<paths>({
  baseUrl: "https://api.example.com",
  headers: {
    Authorization:
      "Bearer p6_01JD5Z8X4QK3M7R2T9V6W1Y0AB:0000000000000000000000000000000000000000000000000000000000000000",
  },
});
const source_url = "https://example.com/in.mp4";
const key = { header: { "Idempotency-Key": "order-1234" } };

export async function integration() {
  const created = await client.POST("/v1/tasks", { body: { type: "video.probe", source_url } });
  const id = created.data?.id ?? "01JD5Z8X4QK3M7R2T9V6W1Y0AB";
  const page = await client.GET("/v1/tasks", { params: { query: { type: "video.trim" } } });
  const task = await client.GET("/v1/tasks/{id}", {
    params: { path: { id }, header: { Prefer: "wait=30" } },
  });
  const canceled = await client.POST("/v1/tasks/{id}/cancel", { params: { path: { id } } });

  const image = await client.POST("/v1/image/watermark", {
    params: key,
    body: { source_url, params: { text: "©" } },
  });
  const video = await client.POST("/v1/video/watermark", {
    params: key,
    body: { source_url, params: { text: "©" } },
  });
  const cover = await client.POST("/v1/video/extract-cover", { params: key, body: { source_url } });
  const trim = await client.POST("/v1/video/trim", {
    params: key,
    body: { source_url, params: { start: 1, duration: 2 } },
  });
  const audio = await client.POST("/v1/audio/trim", {
    params: key,
    body: { source_url, params: { start: 1, duration: 2 } },
  });
  const extracted = await client.POST("/v1/video/extract-audio", { params: key, body: { source_url } });
  const probe = await client.POST("/v1/video/probe", { params: key, body: { source_url } });

  // A tus upload (its bytes as application/offset+octet-stream), then used as a source by its id.
  const tus = { "Tus-Resumable": "1.0.0" };
  const upload = await client.POST("/v1/uploads", { params: { header: { ...tus, "Upload-Length": "11" } } });
  const uploadId = upload.response.headers.get("Location")?.split("/").pop() ?? id;
  const patched = await client.PATCH("/v1/uploads/{id}", {
    params: { path: { id: uploadId }, header: { ...tus, "Upload-Offset": "0" } },
    body: "hello world",
    headers: { "Content-Type": "application/offset+octet-stream" },
  });
  const uploaded = await client.GET("/v1/uploads/{id}", { params: { path: { id: uploadId } } });
  const fromUpload = await client.POST("/v1/video/probe", {
    params: key,
    body: { source_upload_id: uploadId },
  });
  const removed = await client.DELETE("/v1/uploads/{id}", {
    params: { path: { id: uploadId }, header: tus },
  });

  const account = await client.GET("/v1/account");
  const usage = await client.GET("/v1/usage", {
    params: { query: { from: "2026-11-01", to: "2026-11-27" } },
  });

  // What an integration reads from the answers, typed without casts.
  return {
    status: task.data?.status,
    canceled: canceled.data?.status,
    next: page.data?.next_cursor,
    urls: [
      image.data?.url,
      video.data?.url,
      cover.data?.url,
      trim.data?.url,
      audio.data?.url,
      extracted.data?.url,
    ],
    duration: probe.data?.durationSec,
    problem: created.error?.code,
    balance: account.data?.balance,
    upload: [
      patched.response.status,
      uploaded.data?.state,
      fromUpload.data?.durationSec,
      removed.response.status,
    ],
    scopes: account.data?.key.scopes,
    spent: usage.data?.results.map((row) => `${row.date} ${row.operation} ${row.credits}`),
  };
}
