// A module Worker built from the packed client (bundled like wrangler does) and run in workerd by the package
// test: it calls the stand-in API at env.API_URL, checks a webhook signed inside the Worker and uploads (workerd has
// no XMLHttpRequest: the client's fetch stack for tus-js-client).
import { createP6Client, createUploads, verifyWebhook } from "@p6/media-client";
import { Webhook } from "standardwebhooks";

export default {
  async fetch(_request, env) {
    const p6 = createP6Client({ baseUrl: env.API_URL, apiKey: "p6_x:secret" });
    const probe = await p6.POST("/v1/video/probe", { body: { source_url: "https://example.com/a.mp4" } });
    const secret = `whsec_${btoa("0123456789abcdef0123456789abcdef")}`;
    const body = JSON.stringify({ id: "t1", status: "succeeded", outputs: [] });
    const now = new Date();
    const webhook = verifyWebhook(secret, body, {
      "webhook-id": "msg_1",
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign("msg_1", now, body),
      "x-webhook-event": "completed",
    });
    const uploads = createUploads({ baseUrl: env.API_URL, apiKey: "p6_x:secret" });
    const upload = await uploads.upload(new Uint8Array(100_000).fill(7), { chunkSize: 40_000 });
    return Response.json({ status: probe.response.status, data: probe.data, webhook, upload });
  },
};
