// Runs in an empty folder where only the packed client (and its dependencies' tarballs) are installed: plain
// JavaScript, no TypeScript, no repository around it. Exits 0 and prints "ok <node version>" when the client
// works on this Node: import, a call to a loopback stand-in of the API, waitForTask, verifyWebhook, and an upload
// (tus-js-client's Node build) to a stand-in tus endpoint that keeps what each PATCH brings.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { createP6Client, createUploads, P6ApiError, verifyWebhook, waitForTask } from "@p6/media-client";
import { Webhook } from "standardwebhooks";

const task = (status) => ({ id: "01JD5Z8X4QK3M7R2T9V6W1Y0AB", status, outputs: [] });
const UPLOAD = "/v1/uploads/01JD5Z8X4QK3M7R2T9V6W1Y0AC";
const seen = [];
let received = Buffer.alloc(0);
let length = 0;
const server = createServer((req, res) => {
  seen.push({ method: req.method, url: req.url, headers: req.headers });
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const tus = { "Tus-Resumable": "1.0.0" };
    if (req.method === "POST" && req.url === "/v1/uploads") {
      length = Number(req.headers["upload-length"]);
      res.writeHead(201, { ...tus, Location: UPLOAD }).end();
    } else if (req.method === "PATCH" && req.url === UPLOAD) {
      assert.equal(Number(req.headers["upload-offset"]), received.length);
      received = Buffer.concat([received, ...chunks]);
      res.writeHead(204, { ...tus, "Upload-Offset": String(received.length) }).end();
    } else if (req.url === "/v1/video/probe") {
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ id: "r1" }));
    } else if (req.url === "/v1/tasks/missing") {
      res
        .writeHead(404, { "Content-Type": "application/problem+json" })
        .end(JSON.stringify({ type: "t", title: "Not Found", status: 404, code: "RESOURCE_NOT_FOUND" }));
    } else {
      const done = seen.filter((r) => r.url.startsWith("/v1/tasks/")).length > 1;
      res
        .writeHead(200, { "Content-Type": "application/json" })
        .end(JSON.stringify(task(done ? "succeeded" : "processing")));
    }
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
try {
  const p6 = createP6Client({ baseUrl: `http://127.0.0.1:${server.address().port}/`, apiKey: "p6_x:secret" });

  const probe = await p6.POST("/v1/video/probe", { body: { source_url: "https://example.com/a.mp4" } });
  assert.equal(probe.response.status, 200);
  assert.deepEqual(probe.data, { id: "r1" });
  assert.equal(seen[0].headers.authorization, "Bearer p6_x:secret");
  assert.match(seen[0].headers["idempotency-key"], /^[0-9a-f-]{36}$/);

  const done = await waitForTask(p6, task("").id, { intervalMs: 1 });
  assert.equal(done.status, "succeeded");

  await assert.rejects(waitForTask(p6, "missing"), (error) => {
    assert.ok(error instanceof P6ApiError);
    assert.equal(error.problem.code, "RESOURCE_NOT_FOUND");
    return true;
  });

  const secret = `whsec_${btoa("0123456789abcdef0123456789abcdef")}`;
  const body = JSON.stringify(task("succeeded"));
  const now = new Date();
  const headers = {
    "webhook-id": "msg_1",
    "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign("msg_1", now, body),
    "x-webhook-event": "completed",
  };
  assert.deepEqual(verifyWebhook(secret, body, headers), {
    id: "msg_1",
    event: "completed",
    task: task("succeeded"),
  });
  assert.throws(() => verifyWebhook(secret, `${body} `, headers));

  const bytes = new Uint8Array(300_000).map((_, i) => (i * 7) % 251);
  const uploads = createUploads({
    baseUrl: `http://127.0.0.1:${server.address().port}`,
    apiKey: "p6_x:secret",
  });
  const uploaded = await uploads.upload(new Blob([bytes]), { chunkSize: 65_536, filename: "a.bin" });
  assert.deepEqual(uploaded, {
    id: UPLOAD.split("/").pop(),
    url: `http://127.0.0.1:${server.address().port}${UPLOAD}`,
  });
  assert.equal(length, bytes.length);
  assert.deepEqual(new Uint8Array(received), bytes);
  assert.equal(seen.filter((r) => r.method === "PATCH").length, 5);
  console.log(`ok ${process.version}`);
} finally {
  server.close();
}
