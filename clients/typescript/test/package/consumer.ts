// Type-checked against the packed declarations (moduleResolution nodenext), as a consumer's project would.
import {
  createP6Client,
  createUploads,
  type Task,
  type UploadResult,
  uploadDirect,
  verifyWebhook,
  waitForTask,
} from "@p6/media-client";

const p6 = createP6Client({ baseUrl: "https://api.example.com", apiKey: "p6_x:y" });
const created = await p6.POST("/v1/tasks", {
  body: { type: "video.trim", source_url: "https://example.com/a.mp4", params: { start: 1, duration: 2 } },
});
if (created.data) {
  const task: Task = await waitForTask(p6, created.data.id);
  console.log(task.status);
}
await p6.POST("/v1/video/probe", {
  headers: { "Idempotency-Key": "k" },
  body: { source_url: "https://example.com/a.mp4" },
});
// @ts-expect-error: an unknown path is refused by the types
await p6.GET("/v1/nope");
console.log(verifyWebhook("whsec_x", "{}", {}).event);

const uploads = createUploads({ baseUrl: "https://api.example.com", apiKey: "p6_x:y" });
const direct = await uploads.createDirect({ cors_origin: "https://app.example", max_size: 1024 });
const sent: UploadResult = await uploadDirect(direct.url, new Blob(["abc"]), {
  chunkSize: 5 * 1024 * 1024,
  onProgress: (bytes, total) => console.log(bytes / total),
  signal: AbortSignal.timeout(60_000),
});
const page = await uploads.list({ limit: 10 });
console.log(sent.id, page.results[0]?.state, (await uploads.get(sent.id)).size_bytes);
// @ts-expect-error: createDirect needs the origin the browser uploads from
await uploads.createDirect({});
