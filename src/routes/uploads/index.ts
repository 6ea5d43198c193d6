import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/context";
import { registerCreateUpload } from "./create";
import { registerDeleteUpload } from "./delete";
import { registerGetUpload } from "./get";
import { registerUploadOptions } from "./options";
import { registerPatchUpload } from "./patch";
import { registerUploadSource } from "./source";

/** Resumable uploads, tus 1.0.0 (src/uploads): OPTIONS, POST, HEAD, PATCH, GET (JSON), DELETE. */
export function registerUploadRoutes(app: OpenAPIHono<AppEnv>) {
  registerUploadOptions(app);
  registerCreateUpload(app);
  registerGetUpload(app);
  registerPatchUpload(app);
  registerDeleteUpload(app);
  registerUploadSource(app);
}
