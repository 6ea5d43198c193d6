/**
 * Calls the server refuses, each of which the types generated from the live document refuse too: every call
 * below carries `@ts-expect-error`, and tsc fails on a directive with no error under it, so each call is proven
 * a type error (test/e2e/generated-client.test.ts). The test also sends them, to show the server refuses each
 * (the status is returned by name). The one refusal types cannot state: a `limit` over its maximum (an integer
 * range is a number to openapi-typescript), sent last as the document's range check.
 */
import createClient from "openapi-fetch";
import type { paths } from "./api";
import type { Live } from "./integration";

const UPLOAD = "01JD5Z8X4QK3M7R2T9V6W1Y0AB";

export async function refused(live: Live) {
  const client = createClient<paths>({
    baseUrl: live.baseUrl,
    headers: { Authorization: `Bearer ${live.apiKey}` },
  });
  const source_url = live.media("av.mp4");
  const logo = live.media("logo.png");
  const key = () => ({ header: { "Idempotency-Key": crypto.randomUUID() } });
  const tus = { "Tus-Resumable": "1.0.0" } as const;

  const statuses: Record<string, number> = {};
  const send = async (name: string, call: Promise<{ response: Response }>) => {
    statuses[name] = (await call).response.status;
  };

  // Sources: exactly one of source_url or source_upload_id.
  await send(
    "sync, both sources",
    // @ts-expect-error both source_url and source_upload_id
    client.POST("/v1/video/probe", { params: key(), body: { source_url, source_upload_id: UPLOAD } }),
  );
  await send(
    "sync, no source",
    // @ts-expect-error neither source_url nor source_upload_id
    client.POST("/v1/video/probe", { params: key(), body: {} }),
  );
  await send(
    "task, both sources",
    // @ts-expect-error both source_url and source_upload_id
    client.POST("/v1/tasks", { body: { type: "video.probe", source_url, source_upload_id: UPLOAD } }),
  );
  await send(
    "task, no source",
    // @ts-expect-error neither source_url nor source_upload_id
    client.POST("/v1/tasks", { body: { type: "video.probe" } }),
  );

  // Watermarks: exactly one of a logo by URL, a logo by upload, or a text.
  await send(
    "sync, logo and text",
    client.POST("/v1/image/watermark", {
      params: key(),
      // @ts-expect-error two watermark variants
      body: { source_url, params: { watermark_url: logo, text: "©" } },
    }),
  );
  await send(
    "sync, logo by URL and by upload",
    client.POST("/v1/video/watermark", {
      params: key(),
      // @ts-expect-error two watermark variants
      body: { source_url, params: { watermark_url: logo, watermark_upload_id: UPLOAD } },
    }),
  );
  await send(
    "sync, no mark",
    client.POST("/v1/image/watermark", {
      params: key(),
      // @ts-expect-error no watermark variant
      body: { source_url, params: {} },
    }),
  );
  await send(
    "sync, a text param next to a logo (video)",
    client.POST("/v1/video/watermark", {
      params: key(),
      // @ts-expect-error font_size applies to a text mark only
      body: { source_url, params: { watermark_url: logo, font_size: 20 } },
    }),
  );
  await send(
    "task, logo upload and text",
    client.POST("/v1/tasks", {
      // @ts-expect-error two watermark variants
      body: { type: "video.watermark", source_url, params: { watermark_upload_id: UPLOAD, text: "©" } },
    }),
  );
  await send(
    "pipeline step, logo and text",
    client.POST("/v1/tasks", {
      body: {
        type: "pipeline",
        source_url,
        params: {
          // @ts-expect-error two watermark variants in a step
          steps: [{ name: "marked", type: "video.watermark", params: { watermark_url: logo, text: "©" } }],
        },
      },
    }),
  );

  // Trims: exactly one of end or duration.
  await send(
    "sync, end and duration",
    client.POST("/v1/video/trim", {
      params: key(),
      // @ts-expect-error end and duration
      body: { source_url, params: { start: 0, end: 2, duration: 2 } },
    }),
  );
  await send(
    "task, neither end nor duration",
    client.POST("/v1/tasks", {
      // @ts-expect-error neither end nor duration
      body: { type: "audio.trim", source_url, params: { start: 0 } },
    }),
  );

  // Required headers and binary bodies.
  await send(
    "sync, no Idempotency-Key",
    // @ts-expect-error Idempotency-Key is required
    client.POST("/v1/video/probe", { body: { source_url } }),
  );
  await send(
    "tus creation, no Upload-Length",
    // @ts-expect-error Upload-Length is required
    client.POST("/v1/uploads", { params: { header: tus } }),
  );
  const upload = await client.POST("/v1/uploads", { params: { header: { ...tus, "Upload-Length": "5" } } });
  const id = upload.response.headers.get("Location")?.split("/").pop() ?? UPLOAD;
  await send(
    "tus PATCH, no Upload-Offset",
    client.PATCH("/v1/uploads/{id}", {
      // @ts-expect-error Upload-Offset is required
      params: { path: { id }, header: tus },
      body: "hello",
      bodySerializer: (body) => body,
      headers: { "Content-Type": "application/offset+octet-stream" },
    }),
  );
  await send(
    "tus PATCH, a JSON body",
    client.PATCH("/v1/uploads/{id}", {
      params: { path: { id }, header: { ...tus, "Upload-Offset": "0" } },
      // @ts-expect-error the body is the upload's bytes, not JSON
      body: { data: "hello" },
    }),
  );

  return statuses;
}
