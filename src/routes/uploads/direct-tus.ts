import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { ApiError } from "../../errors/api-error";
import { errorResponses, headErrorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { CORS_EXPOSE_HEADERS, corsHeaders, preflightHeaders } from "../../uploads/cors";
import { createDirectUpload, directTarget, directUrlInfo, writeUpload } from "../../uploads/service";
import { DIRECT_TUS_EXTENSIONS, TUS_CHECKSUM_ALGORITHMS, TUS_VERSION } from "../../uploads/tus";
import { HEAD_RESPONSE, HEAD_RULES, headUpload } from "./head";
import { DISCOVERY_HEADERS } from "./options";
import { PATCH_RESPONSE, PATCH_RULES } from "./patch";
import { offsetHeaders, TUS_HEADERS, tusResumable } from "./schema";
import {
  creationHeaders,
  creationRequest,
  firstBytes,
  octetBody,
  patchHeaders,
  patchRequest,
} from "./tus-requests";

/**
 * A direct upload URL (POST /v1/uploads/direct; docs/decisions.md "Direct uploads"): a tus endpoint with no
 * API key, its secret in the path. `/v1/direct-uploads/{token}` takes the creation (once), its Location
 * `/v1/direct-uploads/{token}/upload` the PATCHes and HEADs. Preflights and answers carry CORS headers for
 * the URL's cors_origin only; a request from another Origin is refused 403.
 */

const TokenParam = z.object({
  token: z.string().openapi({
    param: { name: "token", in: "path" },
    description: "The URL's credential: the upload id, a dot, 256 random bits in base64url.",
    example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB.Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmE",
  }),
});
const originHeader = z.object({
  Origin: z
    .string()
    .optional()
    .openapi({
      param: { name: "Origin", in: "header" },
      description: "Sent by browsers: CORS headers are answered only when it is the URL's cors_origin.",
      example: "https://app.example",
    }),
});

const text = (description: string) => ({ description, schema: { type: "string" as const } });
const CORS_RESPONSE_HEADERS = {
  "Access-Control-Allow-Origin": text("The URL's cors_origin, when the request's Origin is that origin."),
  "Access-Control-Expose-Headers": text(`${CORS_EXPOSE_HEADERS.join(", ")}.`),
};
const PREFLIGHT_HEADERS = {
  "Access-Control-Allow-Origin": CORS_RESPONSE_HEADERS["Access-Control-Allow-Origin"],
  "Access-Control-Allow-Methods": text("The URL's methods."),
  "Access-Control-Allow-Headers": text("The tus request headers."),
  "Access-Control-Max-Age": text("Seconds a browser may keep this answer."),
};

const ENDPOINT_METHODS = ["POST", "OPTIONS"];
const UPLOAD_METHODS = ["HEAD", "PATCH", "OPTIONS"];

const preflight = (path: string, operationId: string, methods: string[]) =>
  createRoute({
    method: "options",
    path,
    operationId,
    tags: ["Uploads"],
    summary: `Preflight and tus discovery of a direct upload URL${path.endsWith("/upload") ? "'s upload" : ""}`,
    description: `No key. tus discovery (Tus-Version, Tus-Extension: ${DIRECT_TUS_EXTENSIONS.join(", ")}; Tus-Max-Size: the URL's max_size) and, for a request whose Origin is the URL's cors_origin and whose secret is right, the CORS preflight answer (methods ${methods.join(", ")}, the tus request headers). Any other origin, or a wrong token, gets no CORS header.`,
    security: [],
    request: { params: TokenParam, headers: originHeader },
    responses: {
      204: {
        description: "The URL's tus capabilities, and CORS for its origin.",
        headers: { ...DISCOVERY_HEADERS, ...PREFLIGHT_HEADERS },
      },
    },
  });

const createRouteDef = createRoute({
  method: "post",
  path: "/v1/direct-uploads/{token}",
  operationId: "startDirectUpload",
  tags: ["Uploads"],
  summary: "Create the upload of a direct upload URL",
  description:
    "tus creation (and creation-with-upload) as POST /v1/uploads, with no key: the URL's secret is the credential. Once: a second creation → 409. Upload-Length over the URL's max_size → 413. After the URL's expires_at → 410. Beyond the account's bytes quota → 403. The upload gets the id POST /v1/uploads/direct answered; Location is where the browser PATCHes and HEADs.",
  security: [],
  request: { params: TokenParam, headers: creationHeaders, body: octetBody(false) },
  responses: {
    201: {
      description:
        "Created; Location is the upload's URL (for PATCH and HEAD), Upload-Offset what the body brought.",
      headers: {
        "Tus-Resumable": TUS_HEADERS["Tus-Resumable"],
        Location: TUS_HEADERS.Location,
        "Upload-Offset": TUS_HEADERS["Upload-Offset"],
        "Upload-Expires": TUS_HEADERS["Upload-Expires"],
        ...CORS_RESPONSE_HEADERS,
      },
    },
    ...errorResponses(400, 403, 404, 409, 410, 412, 413, 415, 460, 500),
  },
});

const headRouteDef = createRoute({
  method: "head",
  path: "/v1/direct-uploads/{token}/upload",
  operationId: "headDirectUpload",
  tags: ["Uploads"],
  summary: "A direct upload's offset",
  description: `${HEAD_RULES} No key: the URL's secret. Before its creation → 404; expired → 410.`,
  security: [],
  request: { params: TokenParam, headers: z.object({ "Tus-Resumable": tusResumable }) },
  responses: {
    200: { ...HEAD_RESPONSE, headers: { ...HEAD_RESPONSE.headers, ...CORS_RESPONSE_HEADERS } },
    ...headErrorResponses(403, 404, 410, 412, 500),
  },
});

const patchRouteDef = createRoute({
  method: "patch",
  path: "/v1/direct-uploads/{token}/upload",
  operationId: "patchDirectUpload",
  tags: ["Uploads"],
  summary: "Append bytes to a direct upload",
  description: `${PATCH_RULES} No key: the URL's secret.`,
  security: [],
  request: { params: TokenParam, headers: patchHeaders, body: octetBody(true) },
  responses: {
    204: { ...PATCH_RESPONSE, headers: { ...PATCH_RESPONSE.headers, ...CORS_RESPONSE_HEADERS } },
    ...errorResponses(400, 403, 404, 409, 410, 412, 413, 415, 460, 500),
  },
});

const requestOrigin = (c: Context<AppEnv>) => c.req.header("origin") ?? null;

/** The URL's cors_origin and max_size when the token's secret is right; null otherwise. */
async function urlInfo(c: Context<AppEnv>, token: string) {
  const target = await directTarget(token, null).catch(() => null);
  return target ? directUrlInfo(c.env, target, Date.now()) : null;
}

/**
 * Every answer of a direct URL but its preflight (errors included, so the browser can read them): the CORS
 * headers, when the request's Origin is the URL's cors_origin and its secret is right. Asked of the upload's
 * object after the handler, so nothing the handler does depends on it.
 */
const directCors = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const origin = requestOrigin(c);
  if (c.req.method === "OPTIONS" || origin === null) return;
  const token = c.req.path.split("/")[3] ?? "";
  const info = await urlInfo(c, token);
  if (info?.corsOrigin === origin)
    for (const [name, value] of Object.entries(corsHeaders(origin))) c.res.headers.set(name, value);
});

async function discovery(c: Context<AppEnv>, methods: string[]) {
  const info = await urlInfo(c, c.req.param("token") ?? "");
  const config = c.get("config");
  c.header("Tus-Version", TUS_VERSION);
  c.header("Tus-Extension", DIRECT_TUS_EXTENSIONS.join(","));
  c.header("Tus-Max-Size", String(Math.min(info?.maxSize ?? config.uploadMaxBytes, config.uploadMaxBytes)));
  c.header("Tus-Checksum-Algorithm", TUS_CHECKSUM_ALGORITHMS.join(","));
  if (info && info.corsOrigin === requestOrigin(c))
    for (const [name, value] of Object.entries(preflightHeaders(info.corsOrigin, methods)))
      c.header(name, value);
  return c.body(null, 204);
}

export function registerDirectTus(app: OpenAPIHono<AppEnv>) {
  app.use("/v1/direct-uploads/*", directCors);
  app.openapi(preflight("/v1/direct-uploads/{token}", "discoverDirectUpload", ENDPOINT_METHODS), (c) =>
    discovery(c, ENDPOINT_METHODS),
  );
  app.openapi(preflight("/v1/direct-uploads/{token}/upload", "preflightDirectUpload", UPLOAD_METHODS), (c) =>
    discovery(c, UPLOAD_METHODS),
  );

  app.openapi(createRouteDef, async (c) => {
    const { upload, bytes } = creationRequest(c);
    const { token } = c.req.valid("param");
    const target = await directTarget(token, requestOrigin(c));
    const now = Date.now();
    let record = await createDirectUpload({ env: c.env, config: c.get("config") }, target, upload, now);
    c.header("Location", `${new URL(c.req.url).origin}/v1/direct-uploads/${token}/upload`);
    record = await firstBytes(c, target, bytes, record, now);
    for (const [name, value] of Object.entries(offsetHeaders(record))) c.header(name, value);
    return c.body(null, 201);
  });

  app.openAPIRegistry.registerPath(headRouteDef);
  // Hono answers HEAD with the GET handler; a GET itself is not part of a direct URL.
  app.get("/v1/direct-uploads/:token/upload", async (c) => {
    if (c.req.method !== "HEAD")
      throw new ApiError("METHOD_NOT_ALLOWED", "GET is not allowed on a direct upload URL.", {
        headers: { Allow: UPLOAD_METHODS.join(", ") },
      });
    await headUpload(c, await directTarget(c.req.param("token"), requestOrigin(c)));
    return c.body(null, 200);
  });

  app.openapi(patchRouteDef, async (c) => {
    const input = patchRequest(c);
    const target = await directTarget(c.req.valid("param").token, requestOrigin(c));
    const record = await writeUpload(c.env, target, input, c.req.raw.body, Date.now());
    for (const [name, value] of Object.entries(offsetHeaders(record))) c.header(name, value);
    return c.body(null, 204);
  });
}
