import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/context";
import { registerUploadContent } from "./content";
import { registerCreateUpload } from "./create";
import { registerDeleteUpload } from "./delete";
import { registerDirectUpload } from "./direct";
import { registerDirectTus } from "./direct-tus";
import { registerGetUpload } from "./get";
import { registerListUploads } from "./list";
import { registerUploadOptions } from "./options";
import { registerPatchUpload } from "./patch";
import { registerUploadSource } from "./source";

/**
 * Resumable uploads, tus 1.0.0 (src/uploads): OPTIONS, POST, HEAD, PATCH, GET (JSON, list, content), DELETE
 * with an API key; direct upload URLs (POST /v1/uploads/direct) for browsers without one.
 */
export function registerUploadRoutes(app: OpenAPIHono<AppEnv>) {
  registerUploadOptions(app);
  registerCreateUpload(app);
  // Before /v1/uploads/{id}: "direct" is not an id.
  registerDirectUpload(app);
  registerListUploads(app);
  registerGetUpload(app);
  registerUploadContent(app);
  registerPatchUpload(app);
  registerDeleteUpload(app);
  registerDirectTus(app);
  registerUploadSource(app);
}
