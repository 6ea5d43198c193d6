import type { OpenAPIHono } from "@hono/zod-openapi";
// Imported as ArrayBuffer (wrangler.toml [[rules]] Data): a 32 s 160×90 test pattern with a 440 Hz tone
// (H.264 + AAC, 149 kB) and a 320×180 test card (PNG, 7 kB), both made with ffmpeg's lavfi sources.
import VIDEO from "../../docs/samples/sample.mp4";
import IMAGE from "../../docs/samples/sample.png";
import { ApiError } from "../../errors/api-error";
import type { AppEnv } from "../../http/context";

const SAMPLES: Record<string, { body: ArrayBuffer; type: string }> = {
  "sample.mp4": { body: VIDEO, type: "video/mp4" },
  "sample.png": { body: IMAGE, type: "image/png" },
};

/** GET /docs/samples/<name>: the sources of the reference's code samples (src/docs/code-samples.ts). */
export function registerSamples(app: OpenAPIHono<AppEnv>) {
  app.get("/docs/samples/:name", (c) => {
    const sample = SAMPLES[c.req.param("name")];
    // Thrown, not c.notFound(): the not-found handler would answer 405, the path pattern being a route.
    if (!sample) throw new ApiError("RESOURCE_NOT_FOUND", `No sample ${c.req.param("name")}.`);
    return c.body(sample.body, 200, {
      "Content-Type": sample.type,
      "Cache-Control": "public, max-age=86400",
      "Content-Security-Policy": "default-src 'none'; sandbox",
    });
  });
}
