import { curlExample, type RequestExample } from "./curl.ts";
import { type Document, METHODS, type Operation, type Parameter, resolveRef } from "./openapi.ts";
import { exampleOf } from "./schema.ts";
import { uploadSamples } from "./upload-samples.ts";

/** One entry of an operation's `x-codeSamples` (read by the reference's renderer, and by Redoc alike). */
export type CodeSample = { lang: string; label: string; source: string };

/**
 * Sample media the service itself serves (src/routes/docs): the samples' `source_url` points there, so each
 * sample runs as shown against any running instance (`npm run dev` allows its own loopback address as a
 * source) instead of failing on a placeholder URL.
 */
export const SAMPLE_MEDIA = { video: "/docs/samples/sample.mp4", image: "/docs/samples/sample.png" } as const;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The sample source for an operation path or task type: images for image.*, the video (with audio) else. */
function sampleSource(origin: string, kind: string) {
  return `${origin}${/(^|\/)image[./]/.test(kind) ? SAMPLE_MEDIA.image : SAMPLE_MEDIA.video}`;
}

/**
 * Headers the tus protocol requires on every request that names them, which the document marks optional only
 * because the service answers their absence itself (412, 400): the samples send them.
 */
const TUS_HEADERS = new Set(["tus-resumable", "upload-length", "upload-offset"]);

/** The raw body of a tus PATCH: the file's bytes from its offset. */
const OFFSET_OCTET_STREAM = "application/offset+octet-stream";

/** The request an operation's samples make: its required parameters and its body's example, source swapped. */
function requestOf(doc: Document, origin: string, path: string, method: string, operation: Operation) {
  const item = doc.paths?.[path];
  const parameters = [...(item?.parameters ?? []), ...(operation.parameters ?? [])].map((value) =>
    resolveRef<Parameter>(doc, value),
  );
  const value = (parameter: Parameter) =>
    parameter.example ?? (parameter.schema ? exampleOf(doc, parameter.schema) : parameter.name);
  const pathParams: Record<string, unknown> = {};
  const query: Record<string, unknown> = {};
  const headers: Record<string, unknown> = {};
  for (const parameter of parameters) {
    if (parameter.in === "path") pathParams[parameter.name] = value(parameter);
    // One key per operation: a shared example key would be refused as reused by the next operation's sample.
    else if (parameter.name.toLowerCase() === "idempotency-key")
      headers[parameter.name] = `example-${operation.operationId ?? method}-1`;
    else if (!parameter.required && !TUS_HEADERS.has(parameter.name.toLowerCase())) continue;
    else if (parameter.in === "query") query[parameter.name] = value(parameter);
    else if (parameter.in === "header") headers[parameter.name] = value(parameter);
  }
  const json = operation.requestBody?.content?.["application/json"];
  let body: unknown;
  if (json) {
    body = structuredClone(
      json.example ?? Object.values(json.examples ?? {})[0]?.value ?? exampleOf(doc, json.schema ?? {}),
    );
    if (isObject(body) && typeof body.source_url === "string") {
      body.source_url = sampleSource(origin, typeof body.type === "string" ? body.type : path);
      // An image watermark's mark is an image too.
      if (isObject(body.params) && typeof body.params.watermark_url === "string")
        body.params.watermark_url = `${origin}${SAMPLE_MEDIA.image}`;
    }
  }
  const file = operation.requestBody?.content?.[OFFSET_OCTET_STREAM]
    ? { name: "in.mp4", contentType: OFFSET_OCTET_STREAM }
    : undefined;
  const security = operation.security ?? doc.security ?? [];
  const authenticated = security.some((requirement) => Object.keys(requirement).length > 0);
  return { method, path, pathParams, query, headers, body, file, authenticated } satisfies RequestExample;
}

/** The same request with the TypeScript client (clients/typescript), which adds Idempotency-Key itself. */
export function typescriptExample(origin: string, request: RequestExample): string {
  const params: string[] = [];
  const indent = (json: string) => json.replace(/\n/g, "\n    ");
  if (Object.keys(request.pathParams).length > 0)
    params.push(`path: ${indent(JSON.stringify(request.pathParams, null, 2))}`);
  if (Object.keys(request.query).length > 0)
    params.push(`query: ${indent(JSON.stringify(request.query, null, 2))}`);
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(([name]) => name.toLowerCase() !== "idempotency-key"),
  );
  if (Object.keys(headers).length > 0) params.push(`header: ${indent(JSON.stringify(headers, null, 2))}`);
  const options: string[] = [];
  if (params.length > 0) options.push(`params: { ${params.join(", ")} }`);
  if (request.body !== undefined)
    options.push(`body: ${JSON.stringify(request.body, null, 2).replace(/\n/g, "\n  ")}`);
  const call = `p6.${request.method.toUpperCase()}(${JSON.stringify(request.path)}${
    options.length > 0 ? `, {\n  ${options.join(",\n  ")},\n}` : ""
  })`;
  return [
    `import { createP6Client, P6ApiError } from "@p6/media-client";`,
    "",
    `const p6 = createP6Client({ baseUrl: ${JSON.stringify(origin)}, apiKey: process.env.P6_API_KEY! });`,
    "",
    `const { data, error, response } = await ${call};`,
    "if (error) throw new P6ApiError(response.status, error);",
    "console.log(data);",
  ].join("\n");
}

/**
 * Puts `x-codeSamples` on every operation of the document (in place): curl, then the TypeScript client, for
 * the instance at `origin`. The key is read from $P6_API_KEY in both. The upload routes' come from
 * upload-samples.ts.
 */
export function addCodeSamples(doc: Document, origin: string) {
  const uploads = uploadSamples(origin);
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!item) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const request = requestOf(doc, origin, path, method, operation);
      // The upload routes (tus): written out, as a tus request depends on the file and on the request before it.
      const samples: CodeSample[] = uploads[operation.operationId ?? ""] ?? [
        { lang: "Shell", label: "curl", source: curlExample(origin, request) },
        { lang: "TypeScript", label: "TypeScript client", source: typescriptExample(origin, request) },
      ];
      (operation as Operation & { "x-codeSamples"?: CodeSample[] })["x-codeSamples"] = samples;
    }
  }
  return doc;
}
