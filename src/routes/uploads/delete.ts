import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { deleteUpload, keyTarget } from "../../uploads/service";
import { requireTus, TUS_HEADERS, tusResumable, UploadIdParam } from "./schema";

const route = createRoute({
  method: "delete",
  path: "/v1/uploads/{id}",
  operationId: "deleteUpload",
  tags: ["Uploads"],
  summary: "Delete an upload",
  description:
    "tus termination: the upload's bytes are discarded at once (an incomplete upload's R2 multipart upload aborted), and the upload answers 404 from then on; a pending direct upload's URL stops working. It no longer counts toward the quotas. Tasks already running on it keep the copy the engine fetched. Needs the write scope.",
  request: { params: UploadIdParam, headers: z.object({ "Tus-Resumable": tusResumable }) },
  responses: {
    204: { description: "Deleted.", headers: { "Tus-Resumable": TUS_HEADERS["Tus-Resumable"] } },
    ...errorResponses(401, 403, 404, 410, 412, 429, 500),
  },
});

export function registerDeleteUpload(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    requireTus(c.req.header("tus-resumable"));
    await deleteUpload(c.env, keyTarget(c.get("principal"), c.req.valid("param").id), Date.now());
    return c.body(null, 204);
  });
}
