import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { PageQuerySchema, pageFields, pagePosition } from "../../http/pagination";
import { listAccountUploads } from "../../uploads/service";
import { UploadListSchema } from "./schema";

const route = createRoute({
  method: "get",
  path: "/v1/uploads",
  operationId: "listUploads",
  tags: ["Uploads"],
  summary: "List uploads",
  description:
    "The account's uploads that are pending, uploading or complete (expired and deleted ones are not listed), newest first, with keyset cursor pagination that is stable under new uploads. Each entry is what GET /v1/uploads/{id} answers. Needs the read scope.",
  request: { query: PageQuerySchema },
  responses: {
    200: { description: "A page of uploads.", content: { "application/json": { schema: UploadListSchema } } },
    ...errorResponses(400, 401, 403, 405, 429, 500),
  },
});

export function registerListUploads(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { beforeId, limit } = pagePosition(c.req.valid("query"));
    const page = await listAccountUploads(
      c.env,
      c.get("principal").accountId,
      { beforeId, limit },
      Date.now(),
    );
    c.header("Cache-Control", "no-store");
    return c.json({ ...pageFields(page.rows, page.hasNext), results: page.results }, 200);
  });
}
