/**
 * zod with OpenAPI annotations (`.openapi()`, @asteasolutions/zod-to-openapi): the params schemas carry their
 * wording and component names, so the Worker's OpenAPI document comes from the very schemas the engine
 * validates with (docs/decisions.md "One contract"). The workspace has one zod and one zod-to-openapi, so this
 * is the `z` @hono/zod-openapi extends and reads; extending twice is a no-op. The engine loads the annotation
 * code only (one file, no imports), never a document generator.
 */
import { extendZodWithOpenApi } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";

extendZodWithOpenApi(z);

export { z };
