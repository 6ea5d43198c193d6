/**
 * upload-throughput's baseline: PUT /direct/<key> streams the request body into local R2 with one put, no
 * protocol and no Durable Object; GET /noop answers at once (readiness).
 */
export default {
  async fetch(request: Request, env: { FILES: R2Bucket }) {
    const url = new URL(request.url);
    if (url.pathname === "/noop") return new Response("ok");
    if (request.method === "PUT" && url.pathname.startsWith("/direct/") && request.body) {
      const length = Number(request.headers.get("content-length"));
      const body = request.body.pipeThrough(new FixedLengthStream(length));
      const stored = await env.FILES.put(url.pathname.slice("/direct/".length), body);
      return Response.json({ size: stored?.size ?? 0 });
    }
    return new Response("not found", { status: 404 });
  },
};
