// Type-checked against the packed declarations (moduleResolution nodenext), as a consumer's project would.
import { createP6Client, type Task, verifyWebhook, waitForTask } from "@p6/media-client";

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
