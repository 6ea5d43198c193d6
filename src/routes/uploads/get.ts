import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { keyTarget, uploadStatus } from "../../uploads/service";
import { serializeUpload } from "../../uploads/view";
import { headRoute, headUpload } from "./head";
import { UploadIdParam, UploadSchema } from "./schema";

const route = createRoute({
  method: "get",
  path: "/v1/uploads/{id}",
  operationId: "getUpload",
  tags: ["Uploads"],
  summary: "An upload as JSON",
  description:
    "Its state, size, offset, sniffed media type, filename and expiry. No Tus-Resumable needed; never stops a PATCH in progress (the offset is the committed one). Unknown, deleted or another account's → 404; expired → 410. Needs the read scope.",
  request: { params: UploadIdParam },
  responses: {
    200: { description: "The upload.", content: { "application/json": { schema: UploadSchema } } },
    ...errorResponses(401, 403, 404, 410, 429, 500),
  },
});

export function registerGetUpload(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(headRoute);
  app.openapi(route, async (c) => {
    const target = keyTarget(c.get("principal"), c.req.valid("param").id);
    // Hono routes HEAD to the GET handler: HEAD is tus's offset request.
    if (c.req.method === "HEAD") {
      await headUpload(c, target);
      return c.body(null, 200) as never;
    }
    const record = await uploadStatus(c.env, target, Date.now());
    c.header("Cache-Control", "no-store");
    return c.json(serializeUpload(record), 200);
  });
}
